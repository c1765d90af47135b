"""``gradprobe diagnose`` across processes: every worker of a distributed run records, and
one merged report comes out.

How it works (see docs/distributed.md):

- :mod:`.follow` gives the script a directory (``GRADPROBE_DIAGNOSE_DIR``) and puts
  ``boot/`` first on ``PYTHONPATH``; its ``sitecustomize`` makes every multiprocessing
  worker the script starts (``mp.spawn``, spawn or forkserver) run under ``record()``
  (:mod:`.worker`). torchrun's workers run ``gradprobe diagnose`` themselves.
- Each process appends its notes and findings to ``DIR/<pid>.jsonl``
  (:mod:`gradprobe._ranklog`), line by line, so a worker that dies leaves what it saw.
- :mod:`.merge` reads the directory: findings equal on several ranks become one with the
  list of ranks, and the cross-rank checks (:func:`gradprobe.checks.distributed.across_ranks`)
  compare the ranks' notes.
"""
