"""图表公共部分（figures/drawing/style.py）在悬停提示中使用的词。"""

STRINGS = {
    "style.row": "行",
    "style.column": "列",
    "style.value": "数值",
}
