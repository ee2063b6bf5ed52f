"""Upstream's leaderboard ``submission.json``, as pydantic models (only the text-modality fields).

Field names, ranges and the one cross-field rule (``banking_knowledge`` needs its
``retrieval_config``) follow upstream's submission guide and its models at the pin
(``docs/leaderboard-submission.md``, ``src/tau2/scripts/leaderboard/submission.py``). Unknown keys
are refused: a draft this project writes must be exactly what upstream's validator accepts.
"""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

PLACEHOLDER = "FILL IN"
"""Marks every field the exporter cannot know (names, organisations, contact): replace before submitting."""
LEADERBOARD_DOMAINS = ("retail", "airline", "telecom", "banking_knowledge")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContactInfo(Strict):
    email: str | None = None
    name: str | None = None
    github: str | None = None


class DomainResults(Strict):
    """Percentages (0-100); ``cost`` is the average agent cost in USD per trajectory."""

    pass_1: float | None = Field(None, ge=0, le=100)
    pass_2: float | None = Field(None, ge=0, le=100)
    pass_3: float | None = Field(None, ge=0, le=100)
    pass_4: float | None = Field(None, ge=0, le=100)
    cost: float | None = Field(None, ge=0)
    retrieval_config: str | None = None


class DomainTable(Strict):
    retail: DomainResults | None = None
    airline: DomainResults | None = None
    telecom: DomainResults | None = None
    banking_knowledge: DomainResults | None = None

    @model_validator(mode="after")
    def _banking_names_its_retrieval(self) -> DomainTable:
        if self.banking_knowledge is not None and self.banking_knowledge.retrieval_config is None:
            raise ValueError("banking_knowledge results need a retrieval_config")
        return self


class Verification(Strict):
    modified_prompts: bool | None = None
    omitted_questions: bool | None = None
    details: str | None = None


class Methodology(Strict):
    evaluation_date: datetime.date | None = None
    tau2_bench_version: str | None = None
    user_simulator: str | None = None
    notes: str | None = None
    verification: Verification | None = None


class Reference(Strict):
    title: str
    url: str
    type: str | None = None


class Submission(Strict):
    model_name: str
    model_organization: str
    submitting_organization: str
    submission_date: datetime.date
    submission_type: Literal["standard", "custom"] = "standard"
    modality: Literal["text", "voice"] = "text"
    contact_info: ContactInfo
    results: DomainTable
    is_new: bool = False
    trajectories_available: bool = False
    trajectory_files: dict[str, str] | None = None
    references: list[Reference] | None = None
    methodology: Methodology | None = None

    def text(self) -> str:
        return self.model_dump_json(indent=2, exclude_none=True) + "\n"
