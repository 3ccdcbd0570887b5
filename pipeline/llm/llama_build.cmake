# Read by llama.cpp's project() when pip builds llama-cpp-python: pipeline/llm/runtime.py passes this
# file as CMAKE_PROJECT_llama.cpp_INCLUDE. llama-cpp-python forces LLAMA_BUILD_COMMON ON in the CMake
# cache (FORCE, so -DLLAMA_BUILD_COMMON=OFF on the command line is overwritten), which compiles
# libllama-common (argument parsing, chat templates, JSON, downloads) and cpp-httplib for llama.cpp's own
# command-line tools. The Python package loads only libllama and ggml's libraries. A normal variable here
# shadows the cache entry in llama.cpp's directory (option() leaves it alone, policy CMP0077), so those
# are not compiled. ggml and libllama compile as before (same sources, same flags).
set(LLAMA_BUILD_COMMON OFF)
# vendor-hash (xxhash, sha1, sha256) is linked by libllama-common and libmtmd only, both off: out of the
# default build too (set once the directory is read, when the target exists).
cmake_language(DEFER CALL set_target_properties vendor-hash PROPERTIES EXCLUDE_FROM_ALL ON)
