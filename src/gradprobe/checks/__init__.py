"""Checks: the analyses that turn what the recorder saw into findings, as plug-ins.

Each module here is one family of gradprobe's own checks; a third-party package adds its
own through the ``gradprobe.checks`` entry-point group. See ``docs/checks.md`` for writing
one, and :mod:`gradprobe.checks._api` for the events a check can subscribe to.

Example:
    >>> import gradprobe.checks
    >>> "gradprobe.numerics.non_finite_origin" in [c.name for c in gradprobe.checks.registered()]
    True
"""

# ruff: noqa: I001  (the families' import order is their registration order)
from gradprobe.checks._api import (
    EVENTS,
    BackwardCall,
    Check,
    OpCall,
    Run,
    StepCall,
    check_name,
    location,
    register,
    registered,
)
from gradprobe.checks._runner import CheckRunner, internal_finding

# gradprobe's own checks, one module per family; importing a module registers its checks,
# and this order is the order their findings are listed in.
from gradprobe.checks import hooks as hooks
from gradprobe.checks import numerics as numerics
from gradprobe.checks import missing_gradients as missing_gradients
from gradprobe.checks import freed_graphs as freed_graphs
from gradprobe.checks import saved_tensors as saved_tensors
from gradprobe.checks import optimizer as optimizer
from gradprobe.checks import modes as modes
from gradprobe.checks import switches as switches
from gradprobe.checks import losses as losses
from gradprobe.checks import custom_functions as custom_functions
from gradprobe.checks import parameters as parameters
from gradprobe.checks import discarded as discarded
from gradprobe.checks import protocol as protocol
from gradprobe.checks import consumed as consumed
from gradprobe.checks import structure as structure
from gradprobe.checks import schedules as schedules
from gradprobe.checks import fixed_tables as fixed_tables
from gradprobe.checks import recomputation as recomputation
from gradprobe.checks import warned as warned
from gradprobe.checks import raised as raised
from gradprobe.checks import errors as errors
from gradprobe.checks import unexplained as unexplained
from gradprobe.checks import compiled as compiled
from gradprobe.checks import distributed as distributed

__all__ = [
    "EVENTS",
    "BackwardCall",
    "Check",
    "CheckRunner",
    "OpCall",
    "Run",
    "StepCall",
    "check_name",
    "internal_finding",
    "location",
    "register",
    "registered",
]
