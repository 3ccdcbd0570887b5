"""The benchmarks behind `python -m pipeline bench` (`make bench`, `make bench-llm`): drivers
outside the DAG that time the stages and print and save their figures, and the LLM provider stand-in
they (and the tests) serve calls from. No stage imports them (the `floors` contract)."""
