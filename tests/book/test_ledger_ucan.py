"""UCAN's ledger rules (rsutils.book.audit.ledger.ucan) and the verdicts of its ledger."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rsutils.book.audit.ledger import COLUMNS, LEDGER_SEEDS, LedgerContext, check_ledger, ledger
from rsutils.book.audit.ledger import ucan as ucan_rules
from rsutils.book.audit.ledger.ucan import named_gpus, ucan2025_captions
from rsutils.book.papers.published import PublishedTable, published_table, published_table_names
from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS

HEADERS = ["0.5", "1.0", "1.5", "2.0"]


def table(rows: dict[str, list[float]], improvement: tuple[str, ...] = ()) -> PublishedTable:
    """A hand-made table: certified accuracy rows, and improvement rows by label."""
    data = pd.DataFrame(
        [[label, *values] for label, values in rows.items()], columns=["row", *HEADERS]
    )
    kinds = ["improvement" if label in improvement else "certified_accuracy" for label in rows]
    return PublishedTable("t", data, {"row_kinds": kinds})


def row(**fields: str) -> dict[str, str]:
    return {column: "" for column in COLUMNS} | {"id": "x", "tables": "t"} | fields


def check(*rows: dict[str, str], tables: PublishedTable | None = None, root=None) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows))
    context = LedgerContext(frame, reference_root=root, tables={"t": tables} if tables else {})
    return check_ledger(frame, context)


def verdicts(*rows: dict[str, str], **kwargs) -> list[str]:
    return check(*rows, **kwargs)["verdict"].tolist()


NAN = float("nan")
SOUND = table(
    {
        "A [1]": [50, 30, 20, NAN],
        "B [2]": [60, 20, 10, 5],
        "Ours (radius)": [70, 60, 40, 20],
        "Ours (other)": [40, 50, 45, 0],
    }
)


def test_improvement_over_names_the_baseline_and_recomputes_the_relative_gain() -> None:
    best = row(check="improvement_over", to="Ours (radius)", column="1.0", value="100.0")
    named = best | {"rows": "B [2]", "value": "200.0"}
    # over every named baseline where one prints: the largest is 300% at 2.0 over B's 5
    anywhere = best | {"rows": "A [1]|B [2]", "column": "", "value": "300.0"}
    found = check(best, named, anywhere, best | {"value": "200.0"}, tables=SOUND)
    assert found["verdict"].tolist() == ["holds", "holds", "holds", "does not hold"]
    assert found["found"][0].startswith("100.0 relative % (30 points) at 1.0: 60 over A [1] 30")
    assert "at 2.0: 20 over B [2] 5; 1 of 2 named baselines" in found["found"][2]
    unprinted = best | {"rows": "A [1]", "column": "2.0"}
    assert verdicts(unprinted, tables=SOUND) == ["not printed"]


def test_largest_is_strictly_above_every_printed_rival() -> None:
    everywhere = row(check="largest", to="Ours (radius)", rows="A [1]|B [2]")
    found = check(
        everywhere, row(check="largest", to="Ours (other)", rows="A [1]|B [2]"), tables=SOUND
    )
    assert found["verdict"].tolist() == ["holds", "does not hold"]
    assert found["found"][0] == "above at 4 of 4 columns (0.5, 1.0, 1.5, 2.0)"
    assert found["found"][1].startswith("not above at 0.5: B [2] 60 ≥ 40; 2.0: B [2] 5 ≥ 0")
    # every other row when no rival is named; an empty rival cell is not a comparison
    assert verdicts(row(check="largest", to="Ours (other)", column="1.5"), tables=SOUND) == [
        "holds"
    ]
    assert verdicts(
        row(check="largest", to="Ours (radius)", rows="A [1]", column="2.0"), tables=SOUND
    ) == ["not printed"]


def test_printed_in_row_zero_beyond_and_peak_at() -> None:
    cases = [
        (row(check="printed_in_row", rows="A [1]", value="30"), "holds"),
        (row(check="printed_in_row", rows="A [1]", value="31"), "does not hold"),
        (row(check="zero_beyond", rows="Ours (other)", column="1.5", value="0"), "holds"),
        (row(check="zero_beyond", rows="Ours (other)", column="1.0", value="0"), "does not hold"),
        (row(check="peak_at", rows="Ours (radius)", column="0.5"), "holds"),
        (row(check="peak_at", rows="Ours (other)", column="0.5"), "does not hold"),
    ]
    assert verdicts(*[c for c, _ in cases], tables=SOUND) == [v for _, v in cases]
    with pytest.raises(ValueError, match="none of the rows"):
        check(row(check="printed_in_row", rows="Z", value="1"), tables=SOUND)


def test_falls_below_and_rises() -> None:
    below = row(check="falls_below")
    assert verdicts(below, tables=SOUND) == ["holds"]  # Ours (other) under B at 0.5
    above = table(
        {"A [1]": [50, 30, 20, 10], "Ours": [60, 40, 30, 20], "Improvement": [20, 33.3, 50, 100]},
        improvement=("Improvement",),
    )
    assert verdicts(below, tables=above) == ["does not hold"]
    assert verdicts(row(check="rises"), tables=above) == ["holds"]
    falling = table(
        {"A [1]": [50, 30, 20, 10], "Ours": [60, 40, 22, 20], "Improvement": [20, 33.3, 10, 100]},
        improvement=("Improvement",),
    )
    found = check(row(check="rises"), tables=falling)
    assert found["verdict"].tolist() == ["does not hold"]
    assert found["found"][0] == "falls at t Ours 1.0→1.5: 33.3→10"


def test_count_baselines_counts_citations_once() -> None:
    rows = {
        "A [1]": [1, 1, 1, 1],
        "A again [1]": [1, 1, 1, 1],
        "B [2]": [1, 1, 1, 1],
        "Ours": [2, 2, 2, 2],
    }
    two, three = row(check="count_baselines", value="2"), row(check="count_baselines", value="3")
    assert verdicts(two, three, tables=table(rows)) == ["holds", "does not hold"]


def test_caption_reads_the_text_s_own_captions() -> None:
    figure = row(check="caption", tables="Figure 4", rows="spatial distributions|pattern-wise")
    wrong = figure | {"rows": "certified accuracy"}
    found = check(figure, wrong)
    assert found["verdict"].tolist() == ["holds", "does not hold"]
    assert found["found"][1].endswith("(lacks certified accuracy)")
    with pytest.raises(ValueError, match="no caption labelled 'Figure 99'"):
        check(figure | {"tables": "Figure 99"})


def test_the_captions_are_verbatim_from_the_paper(seeds: Path) -> None:
    lines = (seeds / LEDGER_SEEDS["ucan2025"]).read_text(encoding="utf-8").splitlines()
    captions = ucan2025_captions()
    assert set(captions["caption"]) <= set(lines)
    panels = [p for joined in captions["panels"] if joined for p in joined.split(" · ")]
    assert panels and set(panels) <= set(lines)
    assert len(captions) == sum(line.startswith(("Figure ", "TABLE ")) for line in lines)


def test_product_increase_and_gamma_identities() -> None:
    cases = [
        (row(check="product", value="150,528", **{"from": "3|224|224"}), "holds"),
        (row(check="product", value="150,000", **{"from": "3|224|224"}), "does not hold"),
        (row(check="increase", **{"from": "27.09", "to": "27.43"}), "holds"),
        (row(check="increase", **{"from": "27.43", "to": "27.09"}), "does not hold"),
        (row(check="gamma_identities"), "holds"),
    ]
    assert verdicts(*[c for c, _ in cases]) == [v for _, v in cases]


def test_gamma_identities_fire_on_a_wrong_gamma(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ucan_rules, "gamma", lambda x: np.asarray(x) ** 2 + 1.0)
    assert verdicts(row(check="gamma_identities")) == ["does not hold"]


def test_same_gpu_compares_the_models_two_statements_name() -> None:
    assert named_gpus("four Tesla V100 GPUs and an H100 GPU, RTX 2080 Ti") == {
        "V100",
        "H100",
        "RTX 2080 Ti",
    }
    assert named_gpus("Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz, 128G RAM") == set()
    env = row(id="env", check="not_checkable", reason="r", quote="and Tesla V100 SXM2 32GB.")
    same = row(id="a", check="same_gpu", quote="with four Tesla V100 GPUs", **{"from": "env"})
    other = row(id="b", check="same_gpu", quote="on an H100 GPU", **{"from": "env"})
    assert verdicts(env, same, other)[1:] == ["holds", "does not hold"]
    with pytest.raises(ValueError, match="names no GPU model"):
        check(env, row(check="same_gpu", quote="on a GPU", **{"from": "env"}))


def test_alm_needs_gamma_prints_the_bound_and_needs_a_reason() -> None:
    stated = row(check="alm_needs_gamma", value="6", reason="r", **{"from": "1|100,000|0.001"})
    found = check(stated)
    ceiling = norm.ppf(0.001 ** (1 / 100_000))  # all n draws in class A
    assert found["verdict"][0] == "not checkable"
    assert found["found"][0].startswith(f"needs a bound γ ≥ {6 / ceiling:.2f} on σ")
    assert f"= {ceiling:.2f}" in found["found"][0]
    with pytest.raises(ValueError, match="say why"):
        check(stated | {"reason": ""})


def fake_cohen_release(root: Path, dataset: str, *, stride: int, seconds: float) -> None:
    """Cohen et al.'s log layout, each test log of ``dataset`` with 500 images."""
    arch = {"imagenet": "resnet50", "cifar10": "resnet110"}[dataset]
    for name, trained, split, sigma in COHEN2019_CERTIFY_LOGS:
        if name != dataset:
            continue
        folder = root / "cohen2019/certify" / dataset / arch / f"noise_{trained}" / split
        folder.mkdir(parents=True, exist_ok=True)
        log = pd.DataFrame(
            {
                "idx": np.arange(500) * stride,
                "label": 0,
                "predict": 0,
                "radius": 0.5,
                "correct": 1,
                "time": seconds,
            }
        )
        log.to_csv(folder / f"sigma_{sigma}", sep="\t", index=False)


def test_cohen_images_reads_count_and_stride_of_the_logs(tmp_path: Path) -> None:
    fake_cohen_release(tmp_path / "whole", "cifar10", stride=1, seconds=1.0)
    fake_cohen_release(tmp_path / "strided", "cifar10", stride=20, seconds=1.0)
    entire = row(check="cohen_images_of_ucan", column="cifar10", reason="UCAN's own runs")
    count = entire | {"value": "500"}
    assert verdicts(count, root=tmp_path / "whole") == ["holds"]
    found = check(entire, count | {"value": "501"}, root=tmp_path / "strided")
    assert found["verdict"].tolist() == ["not checkable", "does not hold"]
    assert found["found"][0].endswith(
        "index stride 20 from 0 to 9980: the logs do not cover the test set"
    )
    assert verdicts(entire, root=tmp_path / "nothing") == ["not checkable"]


def test_the_coverage_of_cohens_release_is_no_verdict_on_ucans_sentence(tmp_path: Path) -> None:
    """ "Following [12], we obtain the certified accuracy on the entire test set" says what
    UCAN did: whether Cohen et al.'s release covers a test set is reported, covered or
    not, and judged neither way (an earlier rule said "does not hold")."""
    fake_cohen_release(tmp_path / "whole", "cifar10", stride=1, seconds=1.0)
    entire = row(check="cohen_images_of_ucan", column="cifar10", reason="UCAN's own runs")
    found = check(entire, root=tmp_path / "whole")
    assert found["verdict"].tolist() == ["not checkable"]
    assert found["found"][0].endswith("the logs cover the test set")
    with pytest.raises(ValueError, match="say why"):
        check(entire | {"reason": ""}, root=tmp_path / "whole")


def test_cohen_seconds_gives_the_ratio_and_no_verdict(tmp_path: Path) -> None:
    fake_cohen_release(tmp_path, "imagenet", stride=100, seconds=100.0)
    stated = row(
        check="cohen_seconds_of_ucan",
        column="imagenet",
        value="25",
        reason="other hardware",
        quote="on ImageNet with four Tesla V100 GPUs, 25s per sample",
    )
    found = check(stated, root=tmp_path)
    assert found["verdict"][0] == "not checkable"
    assert "100.0 s per certificate" in found["found"][0]
    assert "released ÷ stated = 4.00; released ÷ (stated × 4 GPUs) = 1.00" in found["found"][0]
    with pytest.raises(ValueError, match="say why"):
        check(stated | {"reason": ""}, root=tmp_path)


def test_released_generator_facts(reference: Path) -> None:
    facts = {
        "lambda": "1",
        "gamma": "1.0",
        "input channels": "3",
        "leaky convolutions": "4",
        "dense block convolutions": "5",
        "convolutions": "7",
    }
    rows = [row(check="released_generator", column=f, value=v) for f, v in facts.items()]
    wrong = [r | {"value": str(float(r["value"]) + 1)} for r in rows]
    assert verdicts(*rows, root=reference) == ["holds"] * len(facts)
    assert verdicts(*wrong, root=reference) == ["does not hold"] * len(facts)
    with pytest.raises(ValueError, match="unknown fact"):
        check(row(check="released_generator", column="depth", value="1"), root=reference)


def test_released_generator_without_the_release_is_not_checkable(tmp_path: Path) -> None:
    missing = row(check="released_generator", column="convolutions", value="7")
    assert verdicts(missing, root=tmp_path) == ["not checkable"]


def test_the_verdicts_of_ucans_ledger(reference: Path) -> None:
    """The counts, and every statement that does not hold, pinned: a change to the
    ledger, its tables or a rule that moves a verdict shows here."""
    found = check_ledger(ledger("ucan2025"), LedgerContext(ledger("ucan2025"), reference))
    assert found.verdict.value_counts().to_dict() == {
        "holds": 48,
        "not checkable": 26,
        "does not hold": 11,
        "not printed": 3,
    }
    assert sorted(found.id[found.verdict == "does not hold"]) == [
        "ucan-ancer-anywhere",
        "ucan-cert-small",
        "ucan-fig4-results",
        "ucan-h100",
        "ucan-l1-baselines",
        "ucan-l1-gaussian-highest",
        "ucan-l1-laplace-dominates",
        "ucan-more-pronounced",
        "ucan-norm-match-l1",
        "ucan-npg-cnn",
        "ucan-these-baselines",
    ]
    by_id = found.set_index("id")
    logs = by_id.loc["ucan-cohen-cifar-logs"]
    assert logs["verdict"] == "not checkable" and "UCAN's own runs" in logs["reason"]
    assert logs["found"].endswith(
        "index stride 20 from 0 to 9980: the logs do not cover the test set"
    )
    assert by_id.loc["ucan-these-baselines", "found"].startswith(
        "7400.0 relative % (74 points) at 1.25: 75 over RANCER [47] 1"
    )
    assert math.isclose(float(by_id.loc["ucan-imagenet-source", "found"].split()[0]), 121.1)


def test_ucans_baselines_omit_dsrs_and_its_text_names_no_denoiser(seeds: Path) -> None:
    """What chapter 07 (b) says of UCAN's baselines: two "Denoise" rows, in Tables IV and
    V only, whose citations the text cannot resolve (it has no list of references and
    never names diffusion models or Carlini et al.), and no row or sentence of double
    sampling randomized smoothing."""
    text = (seeds / LEDGER_SEEDS["ucan2025"]).read_text(encoding="utf-8").lower()
    for absent in ("dsrs", "double sampling", "diffusion", "carlini", "references"):
        assert absent not in text
    assert "denoise 1 [8]" in text  # the rows are read from the text itself
    rows = {
        name: [label for label in published_table(name).data.row if label.startswith("Denoise")]
        for name in published_table_names()
        if name.startswith("ucan2025")
    }
    denoise = ["Denoise 1 [8]", "Denoise 2 [71]"]
    assert {name: found for name, found in rows.items() if found} == {
        "ucan2025_table_iv": denoise,
        "ucan2025_table_v": denoise,
    }
    labels = [label for name in rows for label in published_table(name).data.row]
    assert not any("double" in label.lower() or "dsrs" in label.lower() for label in labels)
