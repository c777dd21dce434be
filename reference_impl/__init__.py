"""The oracle: the requirement catalogue, the profiles and the model of what the spec allows.

Pure Python: no threads, no I/O, and nothing imported from the adapters, the
suite or the reports.
"""

from .catalogue import CATALOGUE
from .catalogue import Level
from .catalogue import Requirement
from .catalogue import for_profile
from .catalogue import requirement
from .constants import Capabilities
from .model import Judgement
from .model import Model
from .model import PendingRead
from .outcome import Violation
from .profiles import get_profile

__all__ = [
    "CATALOGUE",
    "Capabilities",
    "Judgement",
    "Level",
    "Model",
    "PendingRead",
    "Requirement",
    "Violation",
    "for_profile",
    "get_profile",
    "requirement",
]
