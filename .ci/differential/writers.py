"""The writers users have, each writing trip sets into files that tripconv must read to exactly the
trips written (the forward direction)."""

from writers_csv import Miller, python_csv_cases
from writers_json import JQ
from writers_xml import ElementTreeWriter, LxmlWriter, XMLStarlet
from writers_yaml import PyYAMLWriter, RuamelWriter


def forward_cases():
    return python_csv_cases() + [
        Miller("csv"),
        Miller("tsv"),
        ElementTreeWriter("elements"),
        ElementTreeWriter("attributes"),
        LxmlWriter("elements", "ISO-8859-1", pretty=True),
        LxmlWriter("mixed", "UTF-16", pretty=False),
        XMLStarlet(),
        PyYAMLWriter("pyyaml-block", allow_unicode=True, sort_keys=False, default_flow_style=False),
        PyYAMLWriter("pyyaml-flow", default_flow_style=True),
        PyYAMLWriter("pyyaml-datetimes-bare-list", wrapper=False, datetimes=True, sort_keys=False),
        PyYAMLWriter("pyyaml-canonical", canonical=True),
        RuamelWriter("ruamel-rt"),
        RuamelWriter("ruamel-rt-indented", explicit_start=True, indent={"mapping": 2, "sequence": 4, "offset": 2}),
        JQ("jq-json", [], ".", "json"),
        JQ("jq-ascii-compact", ["-a", "-c"], ".", "json"),
        JQ("jq-jsonl", ["-c"], ".trips[]", "jsonl"),
    ]
