# The two set-up commands of the README. Each installs what is missing (Vulkan loader and
# lavapipe when there is no Vulkan device, a virtual environment with cthreads and its test
# extra) and is quick when everything is already there.
PY := .venv/bin/python

.PHONY: demo test bench info clean

demo:
	@bash ci/setup.sh
	@$(PY) demo/mandelbrot.py

test:
	@bash ci/setup.sh
	@$(PY) -m pytest -q $(PYTEST_ARGS)

bench:
	@bash ci/setup.sh bench
	@$(PY) bench/run.py $(BENCH_ARGS)

info:
	@bash ci/setup.sh
	@$(PY) -m cthreads.gpu info

clean:
	rm -rf .venv .setup-stamp
