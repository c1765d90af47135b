"""The machinery of ``gradprobe.record()``: what runs while the user's code runs.

A :class:`~torch.overrides.TorchFunctionMode` sees every torch call made from Python with
the user's stack still in place (NOTE [recorder] in :mod:`gradprobe._recorder.mode`); a
few patches see what no torch function does (``nn.Parameter`` construction, attribute
typos on tensors, optimizer steps, module calls). Everything recorded is plain data:
names, shapes, versions, storage addresses and source lines. Tensors are held only
through weak references; autograd nodes only through :mod:`gradprobe._deepfree`, which
releases them when nothing else does.

One concept per module, each importing only modules listed before it:

- :mod:`~gradprobe._recorder.events`: what a recording keeps (the data model);
- :mod:`~gradprobe._recorder.ops`: which torch functions mean what to the checks;
- :mod:`~gradprobe._recorder.calls`: what kind of call the mode is handed;
- :mod:`~gradprobe._recorder.frames`: whose call it is (the user's line), no frames kept;
- :mod:`~gradprobe._recorder.tensors`: looking at tensors and nodes without changing them;
- :mod:`~gradprobe._recorder.lines`: reading the user's source;
- :mod:`~gradprobe._recorder.graph`, :mod:`~gradprobe._recorder.flows`,
  :mod:`~gradprobe._recorder.backward`: the mode's work for new nodes, particular
  functions and backward calls, as mixins of :class:`RecorderMode`;
- :mod:`~gradprobe._recorder.mode`: :class:`RecorderMode` and its hot path;
- :mod:`~gradprobe._recorder.patching`: what gradprobe's patches note besides torch calls.

The names the rest of gradprobe imports are re-exported here.
"""

from __future__ import annotations

from gradprobe._recorder.events import _MAX_EVENTS as _MAX_EVENTS
from gradprobe._recorder.events import _MAX_FROZEN as _MAX_FROZEN
from gradprobe._recorder.events import Backward as Backward
from gradprobe._recorder.events import CtxWrite as CtxWrite
from gradprobe._recorder.events import CustomFunction as CustomFunction
from gradprobe._recorder.events import Cut as Cut
from gradprobe._recorder.events import Events, NodeKey, SourceLine
from gradprobe._recorder.events import GradRead as GradRead
from gradprobe._recorder.events import Mix as Mix
from gradprobe._recorder.events import NodeRecord as NodeRecord
from gradprobe._recorder.events import NonFinite as NonFinite
from gradprobe._recorder.events import Reparam as Reparam
from gradprobe._recorder.events import StepEvent as StepEvent
from gradprobe._recorder.events import Write as Write
from gradprobe._recorder.frames import _PASSING_ON as _PASSING_ON
from gradprobe._recorder.frames import _user_line as _user_line
from gradprobe._recorder.frames import call_from, frameless, passes_calls_on
from gradprobe._recorder.lines import _decorator_line as _decorator_line
from gradprobe._recorder.lines import _def_line as _def_line
from gradprobe._recorder.lines import _just_after as _just_after
from gradprobe._recorder.lines import _names_at as _names_at
from gradprobe._recorder.lines import _return_line as _return_line
from gradprobe._recorder.lines import _uses_argument_as_gradient as _uses_argument_as_gradient
from gradprobe._recorder.mode import RecorderMode
from gradprobe._recorder.ops import _CUSTOM_NODE as _CUSTOM_NODE
from gradprobe._recorder.patching import _WATCHED as _WATCHED
from gradprobe._recorder.patching import _note_mode as _note_mode
from gradprobe._recorder.patching import _stepped_evals as _stepped_evals
from gradprobe._recorder.patching import _writes_watched as _writes_watched
from gradprobe._recorder.tensors import _cloned_parameter as _cloned_parameter
from gradprobe._recorder.tensors import _grad_fn as _grad_fn
from gradprobe._recorder.tensors import _leaves_below as _leaves_below
from gradprobe._recorder.tensors import _storage as _storage
from gradprobe._recorder.tensors import _tensors as _tensors

__all__ = [
    "Events",
    "NodeKey",
    "RecorderMode",
    "SourceLine",
    "call_from",
    "frameless",
    "passes_calls_on",
]
