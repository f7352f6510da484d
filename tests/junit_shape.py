"""The element and attribute shape a junit.xml must have for CI tools to read it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

# The element/attribute shape of the common JUnit XSD (Jenkins/Ant `junit-10.xsd`), as a subset.
SUITE_ATTRS_REQUIRED = {"name", "tests", "failures", "errors", "time"}
SUITE_CHILDREN = {"properties", "testcase", "system-out", "system-err"}
CASE_ATTRS_REQUIRED = {"name", "classname", "time"}
CASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err"}


def check_junit_shape(xml_text: str) -> ET.Element:
    root = ET.fromstring(xml_text.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = list(root)
    assert suites
    assert all(s.tag == "testsuite" for s in suites)
    for suite in suites:
        assert set(suite.attrib) >= SUITE_ATTRS_REQUIRED, suite.attrib
        assert {c.tag for c in suite} <= SUITE_CHILDREN
        for prop in suite.iter("property"):
            assert set(prop.attrib) == {"name", "value"}
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
        float(suite.get("time"))
        names = set()
        for case in cases:
            assert set(case.attrib) >= CASE_ATTRS_REQUIRED
            assert {c.tag for c in case} <= CASE_CHILDREN
            float(case.get("time"))
            outcome = [c for c in case if c.tag in ("failure", "error", "skipped")]
            assert len(outcome) <= 1
            for c in outcome:
                assert "message" in c.attrib
                assert "type" in c.attrib
            names.add((case.get("classname"), case.get("name")))
        assert len(names) == len(cases), "testcase names must be unique within a class"
    return root
