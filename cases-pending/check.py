"""Check cases-pending/compile/*.yaml (inputs.client_skills) against real releases, until the harness can.

For each case and reference: the reference's `compile` with `clientSkills` answers `systemPromptWithSkills`
(upstream's own appendAvailableSkillsBlock); the port compiles and appends with its profile; both the
record and the prompt with skills must be equal.

    python cases-pending/check.py npm:0.32.18=letta-code@0.32.18 bundle:/path/to/letta.js=letta-code@0.33.3
"""

from __future__ import annotations

import sys
import tempfile
from datetime import datetime
from pathlib import Path

import yaml
from harness.releases import ReferenceSpec
from harness.run import build_request
from harness.scenario import load_scenario

from harness.repo import materialize_repo
from harness.runners.bun_reference import BunReferenceRunner
from memfs_prompt import resolve_profile
from memfs_prompt.compiler import compile_system_prompt
from memfs_prompt.skills_block import append_skills_for_profile

HERE = Path(__file__).parent
CACHE = Path.home() / ".cache" / "letta-conformance"


def main(references: list[str]) -> int:
    tmp = Path(tempfile.mkdtemp())
    cases = []
    for path in sorted((HERE / "compile").glob("*.yaml")):
        data = yaml.safe_load(path.read_text("utf-8"))
        skills = data["inputs"].pop("client_skills")
        if not data["inputs"]:
            del data["inputs"]
        plain = tmp / path.name
        plain.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
        cases.append((load_scenario(plain), skills))
    failed = 0
    for reference in references:
        spec, profile_name = reference.split("=")
        profile = resolve_profile(profile_name)
        runner = BunReferenceRunner(ReferenceSpec.parse(spec), tmp / "home", ceiling=None, timeout=120)
        runner.start()
        if runner.start_error:
            print(f"{spec}: {runner.start_error}")
            return 2
        mismatches = 0
        for scenario, skills in cases:
            repo = materialize_repo(scenario, CACHE)
            request = build_request(scenario, repo)
            answer = runner.process.request({**request.to_wire(), "clientSkills": skills}, 120)
            port = compile_system_prompt(
                repo.memory_dir,
                system=request.system,
                agent_id=request.agent_id,
                conversation_id=request.conversation_id,
                now=datetime.fromisoformat(request.now.replace("Z", "+00:00")),
                previous_message_count=request.previous_message_count,
                include_memfs=request.include_memfs,
                profile=profile,
            )
            record = port.to_json()
            same_record = {key: answer["record"].get(key) for key in record} == record
            with_skills = append_skills_for_profile(port.content, skills, profile)
            if not same_record or with_skills != answer["systemPromptWithSkills"]:
                mismatches += 1
                print(f"MISMATCH {spec} {scenario.id} (record equal: {same_record})")
        runner.close()
        print(f"{spec} {profile.name}: {len(cases)} cases, {mismatches} mismatches")
        failed += mismatches
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
