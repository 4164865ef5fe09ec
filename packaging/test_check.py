"""Tests of check.py's server.json rules: the real file passes, and each
rule catches the mistake it is there for. Run: python3 -m unittest
discover -s packaging"""

import copy
import json
import unittest

import check
from check import ROOT, server_json_errors

GOOD = json.loads((ROOT / "server.json").read_text())


def broken(change) -> list:
    doc = copy.deepcopy(GOOD)
    change(doc)
    return server_json_errors(doc)


class ServerJson(unittest.TestCase):
    def test_the_repository_file_is_valid(self):
        self.assertEqual(server_json_errors(GOOD), [])

    def test_names_agree_across_packages(self):
        self.assertEqual(check.names_errors(), [])

    def test_required_fields(self):
        for key in ("name", "description", "version"):
            self.assertIn(f"missing required {key!r}", broken(lambda d: d.pop(key)))

    def test_name_has_exactly_one_slash(self):
        self.assertTrue(broken(lambda d: d.update(name="mcp-server-tmux")))
        self.assertTrue(broken(lambda d: d.update(name="io.github.a/b/c")))
        self.assertTrue(broken(lambda d: d.update(name="a/")))

    def test_description_at_most_100(self):
        self.assertTrue(broken(lambda d: d.update(description="x" * 101)))
        self.assertEqual(broken(lambda d: d.update(description="x" * 100)), [])

    def test_version_is_specific(self):
        for bad in ("latest", "^0.1.0", ">=0.1", "0.1.x"):
            self.assertTrue(broken(lambda d: d.update(version=bad)), bad)

    def test_package_rules(self):
        self.assertTrue(broken(lambda d: d["packages"][0].update(registryType="brew")))
        self.assertTrue(broken(lambda d: d["packages"][0].update(runtimeHint="pipx")))
        self.assertTrue(broken(lambda d: d["packages"][0].update(transport={"type": "tcp"})))
        self.assertTrue(broken(lambda d: d["packages"][0].pop("transport")))
        self.assertTrue(broken(lambda d: d["packages"][0].update(version="9.9.9")))
        self.assertTrue(broken(lambda d: d["packages"][0].update(colour="red")))
        mcpb = {"registryType": "mcpb", "identifier": "https://x/mcp.mcpb", "transport": {"type": "stdio"}}
        self.assertTrue(broken(lambda d: d["packages"].append(mcpb)))
        self.assertEqual(broken(lambda d: d["packages"].append(dict(mcpb, fileSha256="ab" * 32))), [])

    def test_environment_variables(self):
        env = lambda d: d["packages"][0]["environmentVariables"]  # noqa: E731
        self.assertTrue(broken(lambda d: env(d).append({"description": "no name"})))
        self.assertTrue(broken(lambda d: env(d)[0].update(isSecret="yes")))

    def test_unknown_top_level_key(self):
        self.assertTrue(broken(lambda d: d.update(homepage="https://x")))


if __name__ == "__main__":
    unittest.main()
