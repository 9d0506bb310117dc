"""ui.page.widgets' checks of page-local URL values (plain strings in, no Streamlit server): a value that
names no option is replaced, and the notice says what was changed."""

import figures.attention as fa
from figures.positional import MAX_DIMS_SHOWN, default_dims
from ui.page.widgets import check_choice, check_dims, check_max_pos


def test_check_choice():
    assert check_choice("attn_layer", "2", [1, 2, 3], 1, "layer") == (2, None)
    assert check_choice("attn_layer", 2, [1, 2, 3], 1, "layer") == (2, None)
    assert check_choice("attn_layer", 5, [1, 2], 1, "layer")[0] == 2  # sizes shrank: clamp
    assert check_choice("attn_head", "-1", [1, 2], 1, "head")[0] == 1
    value, notice = check_choice("attn_kind", "foo", list(fa.KINDS), "encoder", fmt=fa.KINDS.get)
    assert value == "encoder" and "attn_kind=`foo`" in notice
    assert check_choice(
        "attn_kind", "Decoder cross-attention", list(fa.KINDS), "encoder", fmt=fa.KINDS.get
    ) == ("cross", None)
    assert check_choice("attn_layer", "nan", [1, 2], 1, "layer")[0] == 1


def test_check_choice_in_chinese():
    value, notice = check_choice(
        "attn_kind", "foo", list(fa.KINDS), "encoder", fmt=lambda k: fa.kind_label(k, "zh"), lang="zh"
    )
    assert value == "encoder" and "attn_kind=`foo` 不可用" in notice and "编码器自注意力" in notice


def test_url_values_are_checked():
    assert check_dims(["3", "5", "3"], 16) == ([3, 5], None)
    dims, note = check_dims(["abc", "16", "-1", "4"], 16)
    assert dims == [4]
    assert note.startswith("Ignored pe_dims=`abc`, `16`, `-1`")
    dims, note = check_dims(["<script>"], 16)
    assert dims == default_dims(16) and "showing dimensions [0, 1, 2, 8]" in note
    dims, note = check_dims([str(i) for i in range(12)], 16)
    assert len(dims) == MAX_DIMS_SHOWN and "only the first" in note
    assert check_dims([], 16) == (default_dims(16), None)
    assert check_max_pos(None) == (128, None)
    assert check_max_pos("512") == (512, None)
    for bad in ("abc", "99999", "3", "1e3", "-20", "٣٢"):
        value, note = check_max_pos(bad)
        assert value == 128 and note.startswith(f"Ignored pe_max_pos=`{bad}`")


def test_a_replaced_max_pos_is_announced_in_chinese():
    note = check_max_pos("abc", lang="zh")[1]
    assert note.startswith("已忽略 pe_max_pos=`abc`")
