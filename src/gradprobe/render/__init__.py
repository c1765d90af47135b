"""Pictures of a :class:`~gradprobe.graph.Graph`.

``to_dot`` writes DOT text in pure Python; ``to_svg`` and ``save_svg`` lay it out with the
first Graphviz engine found (the system ``dot``, else the ``graphviz-pure`` package);
``to_html`` and ``save_html`` write the interactive viewer (``render/html.py``).

Example:
    >>> import torch, gradprobe
    >>> from gradprobe.render import to_svg
    >>> x = torch.ones(2, requires_grad=True)
    >>> to_svg(gradprobe.trace((x * x).sum())).lstrip().startswith("<?xml")
    True
"""

from gradprobe.render.dot import to_dot
from gradprobe.render.html import save_html, to_html
from gradprobe.render.svg import Engine, find_engine, save_svg, to_svg

__all__ = ["Engine", "find_engine", "save_html", "save_svg", "to_dot", "to_html", "to_svg"]
