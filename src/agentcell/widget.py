"""`agentcell.widget`, kept for code that imported it: the live view is `agentcell.frontends.widget.widget`."""

from .frontends.widget.widget import AgentWidget as AgentWidget
