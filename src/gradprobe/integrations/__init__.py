"""Callbacks that run gradprobe inside the training frameworks people already use.

* :mod:`gradprobe.integrations.lightning`: ``GradprobeCallback`` for PyTorch Lightning
  (``pip install "gradprobe[lightning]"``);
* :mod:`gradprobe.integrations.transformers`: ``GradprobeCallback`` for the Hugging Face
  ``Trainer`` (``pip install "gradprobe[transformers]"``).

Each watches the model (:func:`gradprobe.watch`) and records autograd
(:func:`gradprobe.record`) from the start of a training run to its end, logs the watch
statistics of sampled steps and the findings through the framework's own logging, and
keeps the findings on the callback. Importing this package imports neither framework;
importing one of its modules without the framework raises
:class:`~gradprobe.errors.IntegrationNotFoundError`, which names the extra to install.
"""

__all__: list[str] = []
