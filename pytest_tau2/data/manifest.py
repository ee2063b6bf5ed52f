"""The pinned tau2 data set, embedded so verification needs no network and no JSON file.

Every entry maps a path relative to the data root (the folder that holds
``tau2/domains/...``) to its sha256 and size in bytes at :data:`PIN_COMMIT`.
"""

from __future__ import annotations

import json
from pathlib import Path

PIN_SOURCE = "github.com/sierra-research/tau2-bench"
"""Upstream repository the data comes from."""

PIN_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
"""Upstream commit whose ``data/`` subtree is pinned."""

MANIFEST: dict[str, tuple[str, int]] = {
    "tau2/domains/airline/audio_difficulty.json": (
        "d06ed804877e25a8eaa379596f8ec78946145e2648cddf706c59dce5a85a3908",
        1263575,
    ),
    "tau2/domains/airline/db.json": (
        "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
        7042725,
    ),
    "tau2/domains/airline/policy.md": (
        "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
        7676,
    ),
    "tau2/domains/airline/split_tasks.json": (
        "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
        1443,
    ),
    "tau2/domains/airline/tasks.json": (
        "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
        155528,
    ),
    "tau2/domains/airline/tasks_voice.json": (
        "e1360a2a1ecbdb97270838b428d6f51bcf8a121afa5bcbd132f30158589d5a6e",
        1354490,
    ),
    "tau2/domains/mock/db.json": (
        "8661f80b4c693bb15ef2fe6781d24a5765240d61fc74387c770133953f9113ea",
        281,
    ),
    "tau2/domains/mock/policy.md": (
        "50ccbefac7c9ba77ce54131d61cfc6882f74b88ace66771115f9d867ec098203",
        278,
    ),
    "tau2/domains/mock/policy_solo.md": (
        "2608375977bdeedd9cf34ab437b213403c8e97e9929d5094338355a994ac0c86",
        224,
    ),
    "tau2/domains/mock/split_tasks.json": (
        "613c3298e6fd3cf03f71f848ecee519068eb4df54a1ceb28596f5aa443ee6581",
        416,
    ),
    "tau2/domains/mock/tasks.json": (
        "0d8bcd14798bf2e6e082432147f62570c57b0897b4e4e388c95bb02ecbe5d8cf",
        14134,
    ),
    "tau2/domains/mock/tasks_voice.json": (
        "2fff480fc572cb8efda2d0c1d445ab5cfb87e732223056a034a7a1b18d140a45",
        55797,
    ),
    "tau2/domains/mock/user_db.json": (
        "78d424b5177e430b7f483787a956ad3a6a0880e8e5b312be8e373b15c876d51f",
        203,
    ),
    "tau2/domains/retail/audio_difficulty.json": (
        "e979ab09c8b0d09ece5a2812713c00c0c7320faca303a1547e53afba7f23333c",
        2083968,
    ),
    "tau2/domains/retail/db.json": (
        "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
        2811616,
    ),
    "tau2/domains/retail/policy.md": (
        "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
        6699,
    ),
    "tau2/domains/retail/split_tasks.json": (
        "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
        3263,
    ),
    "tau2/domains/retail/tasks.json": (
        "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
        345982,
    ),
    "tau2/domains/retail/tasks_voice.json": (
        "d6cdb8d8bec58ffbb2fd808486bdb3e9238c93517648f7180908ea5cc1a80604",
        3088442,
    ),
    "tau2/domains/telecom/audio_difficulty.json": (
        "88d9986c8b8a140c1897750f5996d036de757ea3f2698f03e286543d338cc02d",
        975551,
    ),
    "tau2/domains/telecom/db.toml": (
        "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0",
        9628,
    ),
    "tau2/domains/telecom/main_policy.md": (
        "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7",
        5699,
    ),
    "tau2/domains/telecom/main_policy_solo.md": (
        "781296ae5419169cb64aac0c4fa2aa6129c78f3c1592f64abd80df6fbabb7042",
        5200,
    ),
    "tau2/domains/telecom/split_tasks.json": (
        "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec",
        356149,
    ),
    "tau2/domains/telecom/tasks.json": (
        "37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4",
        13977063,
    ),
    "tau2/domains/telecom/tasks_small.json": (
        "c8ea6f75adc18a8ad363974292cbd26b6e8b0e348ec87d265a4188e0088a8f24",
        83833,
    ),
    "tau2/domains/telecom/tech_support_manual.md": (
        "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba",
        17589,
    ),
    "tau2/domains/telecom/tech_support_workflow.md": (
        "64f3ccd13875d14f358b21b9af221dab09e0e7bf5690d0e4322fb91855a43a4d",
        16390,
    ),
    "tau2/domains/telecom/tech_support_workflow_solo.md": (
        "b174d1f9705b5d7df49468daf99560a5633f86d23e10499a1166a7753706a412",
        15470,
    ),
    "tau2/domains/telecom/user_db.toml": (
        "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c",
        933,
    ),
    "tau2/user_simulator/simulation_guidelines.md": (
        "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3",
        1449,
    ),
    "tau2/user_simulator/simulation_guidelines_tools.md": (
        "cbf3d8a4d8642fd04e559862f1afef55d7dd4e6a7e727ca49e239023c599de0c",
        2747,
    ),
    "tau2/user_simulator/simulation_guidelines_voice.md": (
        "2442aed36d303a55b3b933860a2de9c45310b783fe9c67cb48506c58709c725f",
        6540,
    ),
    "tau2/user_simulator/simulation_guidelines_voice_tools.md": (
        "4a77374fb680181ffc40eda84c9810e10deb9e20c6585597a4a0256a70d40235",
        7912,
    ),
}
"""Relative path -> (sha256 hex digest, size in bytes) for every pinned file."""

_USER_GUIDELINES = "tau2/user_simulator/simulation_guidelines.md"
_USER_GUIDELINES_TOOLS = "tau2/user_simulator/simulation_guidelines_tools.md"

DOMAIN_FILES: dict[str, tuple[str, ...]] = {
    "retail": (
        "tau2/domains/retail/db.json",
        "tau2/domains/retail/tasks.json",
        "tau2/domains/retail/split_tasks.json",
        "tau2/domains/retail/policy.md",
        _USER_GUIDELINES,
    ),
    "airline": (
        "tau2/domains/airline/db.json",
        "tau2/domains/airline/tasks.json",
        "tau2/domains/airline/split_tasks.json",
        "tau2/domains/airline/policy.md",
        _USER_GUIDELINES,
    ),
    "mock": (
        "tau2/domains/mock/db.json",
        "tau2/domains/mock/user_db.json",
        "tau2/domains/mock/tasks.json",
        "tau2/domains/mock/split_tasks.json",
        "tau2/domains/mock/policy.md",
        _USER_GUIDELINES_TOOLS,
    ),
    # Telecom's user simulator has its own tools, hence the tools variant of the guidelines.
    "telecom": (
        "tau2/domains/telecom/db.toml",
        "tau2/domains/telecom/user_db.toml",
        "tau2/domains/telecom/tasks.json",
        "tau2/domains/telecom/split_tasks.json",
        "tau2/domains/telecom/main_policy.md",
        "tau2/domains/telecom/tech_support_manual.md",
        _USER_GUIDELINES_TOOLS,
    ),
}
"""Domain name -> the manifest files that domain reads at run time."""

BANKING_MANIFEST = Path(__file__).with_name("banking_knowledge_manifest.json")
"""banking_knowledge's 815 pinned files (tasks, documents, prompts, DB), kept as JSON beside this
module: as Python literals they would be 3,000 lines."""


def _add_banking() -> None:
    entries: dict[str, list[object]] = json.loads(BANKING_MANIFEST.read_text(encoding="utf-8"))
    for relative, (sha, size) in entries.items():
        MANIFEST[relative] = (str(sha), int(str(size)))
    # Every pinned file: the agent may read any document (retrieval), and fetch gets them all.
    DOMAIN_FILES["banking_knowledge"] = (*sorted(entries), _USER_GUIDELINES, _USER_GUIDELINES_TOOLS)


_add_banking()
