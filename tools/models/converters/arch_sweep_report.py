"""The sweep's report (tools/models/converters/arch_sweep.py): one row per architecture x mode, and the refused
forms across the sweep (op kind -> architectures, counts), as Markdown and JSON."""

from __future__ import annotations

import json
import re

# Tensor and node names quoted in qnnweb's reasons: one reason per form, not per node.
QUOTED_NAME = re.compile(r"'[^']*'")


def _refusal_text(problems: dict) -> str:
    return ", ".join(f"{op} x{n}" for op, n in sorted(problems.items(), key=lambda kv: (-kv[1], kv[0])))


def row_cells(row: dict) -> list[str]:
    status = row["status"]
    if status == "ran":
        exact = f"{100 * row['exact_share']:.1f}"
        worst = "-" if row["worst_quanta"] is None else f"{row['worst_quanta']:g}"
        detail = f"max abs diff {row['max_abs_diff']:.4g}"
    elif status == "refused":
        exact, worst, detail = "", "", _refusal_text(row["refused_ops"])
    else:
        exact, worst, detail = "", "", f"{row['stage']}: {row['error']}"
    return [row["arch"], row["mode"], status, exact, worst, detail]


def results_table(rows: list[dict]) -> str:
    lines = ["| architecture | mode | loads? | exact % | worst quanta | refused ops (count) / note |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row_cells(r)) + " |" for r in rows]
    return "\n".join(lines)


def refused_forms(rows: list[dict]) -> list[dict]:
    """Op kind -> the architectures refusing on it (ops in the default mode, the first one swept), the
    modes it appears in, the total op count over every architecture x mode, how many of those a loader
    could compute once at load time (arch_sweep_onnx.load_time_nodes), and its reasons."""
    forms = {}
    default_mode = rows[0]["mode"] if rows else None
    for row in rows:
        if row["status"] != "refused":
            continue
        for op, count in row["refused_ops"].items():
            form = forms.setdefault(op, {"op": op, "architectures": {}, "modes": set(), "total": 0, "foldable": 0,
                                         "reasons": set()})
            form["modes"].add(row["mode"])
            form["total"] += count
            form["foldable"] += row.get("foldable_ops", {}).get(op, 0)
            form["reasons"].update(QUOTED_NAME.sub("'…'", r) for r in row["reasons"].get(op, []))
            if row["mode"] == default_mode or row["arch"] not in form["architectures"]:
                form["architectures"][row["arch"]] = count
    ordered = sorted(forms.values(), key=lambda f: (-len(f["architectures"]), -f["total"], f["op"]))
    return [{**f, "modes": sorted(f["modes"]), "reasons": sorted(f["reasons"])} for f in ordered]


def forms_table(forms: list[dict]) -> str:
    lines = ["| op kind | architectures | # archs | ops (all modes) | of which load-time constant | modes "
             "| reason (first) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for f in forms:
        archs = ", ".join(f"{a} ({n})" for a, n in f["architectures"].items())
        reason = f["reasons"][0] if f["reasons"] else ""
        if len(f["reasons"]) > 1:
            reason += f" (+{len(f['reasons']) - 1} other reasons)"
        cells = [f["op"], archs, str(len(f["architectures"])), str(f["total"]), str(f["foldable"]),
                 ", ".join(f["modes"]), reason]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def float_ops_table(rows: list[dict]) -> str:
    """Op type -> architectures (count) where quantize_static left it in float, in the first mode swept."""
    first = rows[0]["mode"] if rows else None
    kinds = {}
    for row in rows:
        if row["mode"] == first:
            for op, count in row.get("float_ops", {}).items():
                kinds.setdefault(op, {})[row["arch"]] = count
    lines = [f"| op type | architectures (count) in {first} |", "| --- | --- |"]
    for op, archs in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"| {op} | " + ", ".join(f"{a} ({n})" for a, n in archs.items()) + " |")
    return "\n".join(lines)


def markdown(header: dict, rows: list[dict]) -> str:
    parts = ["# arch-sweep", "", *[f"- {k}: {v}" for k, v in header.items()], "",
             "## Architecture x mode", "", results_table(rows), "",
             "## Refused forms across the sweep", "", forms_table(refused_forms(rows)), "",
             "## Ops quantize_static left in float", "", float_ops_table(rows), ""]
    return "\n".join(parts)


def json_text(header: dict, rows: list[dict]) -> str:
    return json.dumps({"header": header, "results": rows, "refused_forms": refused_forms(rows)}, indent=1) + "\n"
