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
from .judgement import Judgement
from .judgement import Violation
from .model import Model
from .model_state import PendingRead
from .profiles import get_profile
from .record import CallRecord
from .step import Step
from .step import judge

__all__ = [
    "CATALOGUE",
    "CallRecord",
    "Capabilities",
    "Judgement",
    "Level",
    "Model",
    "PendingRead",
    "Requirement",
    "Step",
    "Violation",
    "for_profile",
    "get_profile",
    "judge",
    "requirement",
]
