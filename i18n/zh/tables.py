"""多个页面的表格（st.dataframe）下方的说明。"""

STRINGS = {
    "tables.formula_note": (
        "以 =、+、-、@（或制表符）开头的单元格前面加了一个 '：否则用电子表格打开这张表（它的“Download as CSV”下载，"
        "或复制粘贴）时，会把它当作公式执行。"
    ),
}
