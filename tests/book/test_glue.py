"""Gluing numbers for the prose: one by one, a record's fields, a table's cells."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from rsutils.book.glue import (
    glue_all,
    glue_fields,
    glue_table,
    glued_values,
    key_part,
    plain,
    unformatted_float_glues,
)


@pytest.fixture
def glued(monkeypatch) -> dict[str, object]:
    """What the chapter glued, by name (myst-nb's glue replaced by a recorder)."""
    found: dict[str, object] = {}

    def record(name: str, value: object, display: bool) -> None:
        assert display is False  # glued for the prose, never shown in the cell
        assert name not in found, f"{name} glued twice"
        found[name] = value

    monkeypatch.setattr("myst_nb.glue", record)
    return found


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame(
        {"r = 0": [0.75, 0.5], "r = 1": [0.25, np.float32(0.125)], "images": [20, 10]},
        index=pd.Index(["Cohen", "Cohen-DS"], name="method"),
    )


def test_glue_all_glues_each_value_under_its_name(glued) -> None:
    glue_all(acr=0.5, label="class 1", chance=np.float64(0.03))
    assert glued == {"acr": 0.5, "label": "class 1", "chance": 0.03}
    assert type(glued["chance"]) is float  # its repr is a number a format can print


def test_numpy_scalars_are_glued_as_the_python_numbers_they_hold() -> None:
    for value, kind in ((np.float64(0.1), float), (np.int64(3), int), (np.bool_(True), bool)):
        assert plain(value) == value and type(plain(value)) is kind
    assert repr(plain(np.float32(0.1))) == repr(float(np.float32(0.1)))
    assert plain("class 1") == "class 1" and plain(None) is None


def test_key_parts_are_made_of_ascii_letters_digits_and_underscores() -> None:
    assert key_part("r = 0") == "r_0" and key_part(0.25) == "0_25"
    assert key_part("Cohen-DS σ0 = 0.5") == "cohen_ds_0_0_5"
    with pytest.raises(ValueError, match="give its key part explicitly"):
        key_part("σ ≡ ∞")


def test_a_table_is_glued_by_row_and_column(glued, table) -> None:
    rows, columns = {"Cohen": "cohen", "Cohen-DS": "ds"}, {"r = 0": "r0", "r = 1": "r1"}
    assert glue_table(table, "env_{row}_{column}", rows=rows, columns=columns) is None
    expected = {"env_cohen_r0": 0.75, "env_cohen_r1": 0.25, "env_ds_r0": 0.5, "env_ds_r1": 0.125}
    assert glued == expected  # nothing returned: a cell ending in it shows no output
    assert all(type(value) is float for value in glued.values())


def test_labels_left_out_are_all_glued_under_keys_made_from_them(glued, table) -> None:
    glue_table(table[["images"]], "{row}_{column}")
    assert glued == {"cohen_images": 20, "cohen_ds_images": 10}
    assert all(type(value) is int for value in glued.values())


def test_one_column_needs_no_column_in_the_key(glued, table) -> None:
    glue_table(table, "acr_{row}", columns={"r = 1": ""}, convert=lambda v: f"{v:.2f}")
    assert glued == {"acr_cohen": "0.25", "acr_cohen_ds": "0.12"}


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"key": "acr_{row}"}, ValueError, r"names 2 value\(s\) for 6 cells"),
        ({"key": "x_{row}_{col}"}, ValueError, r"names \['col'\]; .* only \{row\} and \{column\}"),
        ({"key": "{row}", "rows": {"MACER": "m"}}, KeyError, r"no row labelled \['MACER'\]"),
        ({"key": "{column}", "columns": {"r = 2": "r2"}}, KeyError, r"no column labelled"),
        ({"key": "acr {row}", "columns": {"r = 0": ""}}, ValueError, "not identifiers"),
    ],
)
def test_a_bad_table_key_glues_nothing(glued, table, arguments, error, message) -> None:
    with pytest.raises(error, match=message):
        glue_table(table, **arguments)
    assert glued == {}


def test_repeated_labels_are_refused(glued, table) -> None:
    with pytest.raises(ValueError, match="repeats a row or column label"):
        glue_table(pd.concat([table, table]), "{row}_{column}")
    assert glued == {}


def test_a_record_is_glued_field_by_field(glued, table) -> None:
    glue_fields(table.loc["Cohen-DS"], "ds_", {"r0": "r = 0", "images": "images"})
    assert glued == {"ds_r0": 0.5, "ds_images": 10.0}  # a row of a mixed table is float
    glue_fields({"seed": np.int64(4), "n": 1000}, "run_", ["seed", "n"], convert=str)
    assert glued["run_seed"] == "4" and glued["run_n"] == "1000"


def test_a_dataclass_is_read_by_attribute(glued) -> None:
    @dataclass
    class Certificate:
        radius: float
        alm: float

    glue_fields(Certificate(np.float64(0.5), 0.75), "ex_", {"r": "radius", "alm": "alm"})
    assert glued == {"ex_r": 0.5, "ex_alm": 0.75} and type(glued["ex_r"]) is float


def test_a_missing_field_is_an_error_unless_a_default_is_given(glued) -> None:
    counts = pd.Series({"kept": 7, "shrunk": 2})
    with pytest.raises(KeyError, match=r"no field 'adopted' \(it has \['kept', 'shrunk'\]\)"):
        glue_fields(counts, "n_", ["kept", "adopted"])
    assert glued == {}
    glue_fields(counts, "n_", ["kept", "adopted"], default=0)
    assert glued == {"n_kept": 7, "n_adopted": 0}


def test_a_field_key_must_be_citable(glued) -> None:
    with pytest.raises(ValueError, match=r"\['n kept'\] are not identifiers"):
        glue_fields({"kept": 1}, "n ", ["kept"])
    assert glued == {}


def _glued_notebook(monkeypatch, prose: str, **values: object):
    """An executed notebook in miniature: one code cell whose outputs are what myst-nb's
    own ``glue`` displays for ``values`` (display=False, as glue_all glues), then
    ``prose`` as a markdown cell."""
    import nbformat

    outputs = []

    def capture(data, raw, metadata):
        assert raw is True
        outputs.append(nbformat.v4.new_output("display_data", data=data, metadata=metadata))

    monkeypatch.setattr("myst_nb.ext.glue.ipy_display", capture)
    glue_all(**values)
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("glue_all(...)", outputs=outputs),
            nbformat.v4.new_markdown_cell(prose),
        ]
    )


def test_glued_values_are_read_from_the_outputs_by_name(monkeypatch) -> None:
    notebook = _glued_notebook(monkeypatch, "", gap=0.5, n=12, label="class 1")
    assert glued_values(notebook) == {"gap": "0.5", "n": "12", "label": "'class 1'"}


def test_a_float_pasted_without_a_format_is_found(monkeypatch) -> None:
    """The case that reached the built book: 0.004 computed as a difference of
    accuracies, pasted as 0.0040000000000000036."""
    change = 0.009 - 0.005
    prose = "changes by at most {glue:text}`change` in {glue:text}`cells` cells"
    notebook = _glued_notebook(monkeypatch, prose, change=change, cells=5)
    (found,) = unformatted_float_glues(notebook)
    assert found.startswith("cell 1: {glue:text}`change` pastes the float 'change'")
    assert repr(change) in found and "{glue:text}`change:.3f`" in found


@pytest.mark.parametrize(
    "role",
    [
        "{glue:text}`x:s`",  # a string format pastes the repr too
        "{glue}`x`",
        "{glue:any}`x`",
    ],
)
def test_every_role_that_cannot_format_a_float_is_found(monkeypatch, role) -> None:
    notebook = _glued_notebook(monkeypatch, f"x is {role}.", x=0.1)
    assert len(unformatted_float_glues(notebook)) == 1


@pytest.mark.parametrize("value", [3.0, np.float64(0.25)])
def test_integral_and_numpy_floats_count_as_floats(monkeypatch, value) -> None:
    """3.0 prints as such (and as a fraction at another profile); a numpy float glued
    unconverted prints as np.float64(...), which no format can read either."""
    notebook = _glued_notebook(monkeypatch, "{glue:text}`x`", x=value)
    assert len(unformatted_float_glues(notebook)) == 1


def test_formatted_floats_and_other_values_pass(monkeypatch) -> None:
    prose = (
        "{glue:text}`gap:.3f`, {glue:text}`share:.1%`, {glue:text}`alpha:g`, "
        "{glue:text}`n`, {glue:text}`label`, {glue:text}`text_number`, "
        "{glue:text}`other.ipynb::gap` and {glue:text}`never_glued`"
    )
    notebook = _glued_notebook(
        monkeypatch,
        prose,
        gap=0.0040000000000000036,
        share=0.25,
        alpha=0.001,
        n=100_000,
        label="imagenet",
        text_number="0.0040",  # a string the chapter formatted itself
    )
    assert unformatted_float_glues(notebook) == []
