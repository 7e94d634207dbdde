"""`agentcell.magics`, kept for code that imported it: the magics are `agentcell.frontends.jupyter.magics`."""

from .frontends.jupyter.magics import AgentMagics as AgentMagics
from .frontends.jupyter.magics import load as load
from .frontends.jupyter.magics import unload as unload
