"""注意力页上的归纳头（ui/sections/induction.py）：每个头的角色与分数，以及显示它们的重复序列。"""

STRINGS = {
    "induction.title": "归纳头：每个头在做什么",
    "induction.explain": (
        "**归纳头**（induction head）会补全它见过的模式：在词元 B 处，它回头看 B 上一次出现时紧跟其后的词元，"
        "并把它复制出来（“… Harry Potter … Harry → Potter”）。**前一词元头**只看紧挨着的前一个词元；两者配合工作。"
        "本模型的每个头都在 {batch} 条由 {length} 个从词表中任意抽取的词元组成、各写两遍的序列上测量过（Olsson 等，2022）："
        "**前缀匹配**（PM）是第二遍中每个词元的注意力落在它第一次出现之后那个词元上的比例（1 表示全部）；"
        "**前一词元**（PT）是落在紧挨着的前一个词元上的比例；**复制**分数在 −1 到 1 之间，只从该头的权重"
        "（其 OV 电路）读出：为正时，表示该头读到的词元会在输出端提高同一词元的分数。"
    ),
    "induction.rule": (
        "角色：PM ≥ {pm} 且复制分数 > {copying} 为归纳头；否则 PT ≥ {pt} 为前一词元头；其余为其他。"
    ),
    "induction.loss": "上下文学习：模型在第一遍上的损失为每词元 {first} 奈特，在第二遍上为 {second} —— {verdict}。",
    "induction.loss.better": "仅凭第一遍，重复部分就预测得更好",
    "induction.loss.same": "并没有更好：这个模型还没有利用第一遍",
    "induction.none": "本模型没有哪个头的前缀匹配达到 {pm} 且复制分数为正。",
    "induction.found": "归纳头：{heads}。",
    "induction.failed": "无法测量本模型的各个头：{error}",
    "induction.decoder_only": "归纳头是在仅解码器（类 GPT）模型中测量的。",
    "induction.role.induction": "归纳",
    "induction.role.previous-token": "前一词元",
    "induction.role.other": "其他",
    "induction.head_label": "{n} · {role}（PM {pm}）",
    "induction.head_title": "头 {n} · {role}",
    "induction.where": "第 {layer} 层第 {head} 头",
    "induction.table.layer": "层",
    "induction.table.head": "头",
    "induction.table.role": "角色",
    "induction.table.pm": "前缀匹配",
    "induction.table.pt": "前一词元",
    "induction.table.copying": "复制",
    "induction.repeat": "重复一个序列",
    "induction.repeat.help": (
        "把句子换成从本模型词表中任意抽取的 {n} 个词元（英文单词和汉字），写两遍。在第二遍中，归纳头从每个词元看向它第一次"
        "出现之后的那个词元：对角线下方、向左 {n} − 1 个位置的一条斜纹。"
    ),
    "induction.repeat.none": "本模型的词表里没有可供重复的完整单词或单个汉字。",
    "induction.repeat.shown": (
        "句子是一个由 {n} 个词元组成、写了两遍的序列：选一个归纳头（标签上写着），"
        "找出从第二遍每个词元指向其第一次出现之后那个词元的斜纹。"
    ),
    "induction.show_gpt": "用小型 GPT 查看归纳头",
    "induction.show_gpt.why": "归纳头出现在仅解码器的语言模型中，例如本应用自带的小型 GPT。",
}
