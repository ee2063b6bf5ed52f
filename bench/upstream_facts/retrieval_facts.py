"""Upstream's BM25 and grep rankings for a few queries (see README.md): doc ids and scores."""

import json
import sys

from loguru import logger
from tau2.domains.banking_knowledge.environment import get_knowledge_base
from tau2.domains.banking_knowledge.retrieval import create_bm25_retrieval_pipeline, create_grep_retrieval_pipeline

logger.remove()
QUERIES = [
    "how do I dispute a debit card charge",
    "credit limit increase eligibility",
    "close checking account early fee",
    "transfer reason codes",
    "lost card replacement",
    "Gold Rewards Card annual fee",
    "ATM deposit not credited",
    "cash back dispute",
    "referral program",
    "savings account interest APY",
]
PATTERNS = ["fee|charge", "unlock_discoverable_agent_tool", "credit.*card", "provisional credit", "[unbalanced"]
kb = get_knowledge_base()
bm25 = create_bm25_retrieval_pipeline(knowledge_base=kb, top_k=10)
grep = create_grep_retrieval_pipeline(knowledge_base=kb, top_k=10, case_sensitive=False)
out = {
    "bm25": {q: [[d, round(s, 6)] for d, s in bm25.retrieve(q)] for q in QUERIES},
    "grep": {p: [[d, s] for d, s in grep.retrieve(p)] for p in PATTERNS},
}
json.dump(out, sys.stdout, indent=1)
