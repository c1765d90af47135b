"""Put first on PYTHONPATH by ``gradprobe diagnose`` for the interpreters a script starts
(``mp.spawn`` and ``multiprocessing`` spawn/forkserver workers, torchrun's workers): when
``GRADPROBE_DIAGNOSE_DIR`` is set, each multiprocessing worker runs its target under
``gradprobe.record()`` and leaves its findings in that directory. Then the
``sitecustomize`` this file hides, if any, runs as it would have."""

import importlib.machinery
import importlib.util
import os
import sys

if os.environ.get("GRADPROBE_DIAGNOSE_DIR"):
    try:
        from gradprobe._distributed.worker import install

        install()
    except Exception as problem:  # noqa: BLE001  (the script must run even so)
        sys.stderr.write(f"gradprobe: this process is not recorded ({problem!r})\n")


def _chain() -> None:
    # os.path, not pathlib: this runs at the start of every worker interpreter
    here = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]  # noqa: PTH100
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_chain()
