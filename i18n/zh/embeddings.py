"""“词嵌入”页（pages/embeddings.py）及其图表（figures/embeddings.py）。"""

STRINGS = {
    "embeddings.caption": (
        "每个词元编号从一张可学习的表 E（词表大小 × d_model）中取出一行。这一行乘以 √d_model，"
        "再加上位置编码，就是编码器读入的向量。"
    ),
    "embeddings.caption.learned": (
        "每个词元编号从一张可学习的表 E（词表大小 × d_model）中取出一行。这一行乘以 √d_model，"
        "再加上一个可学习的位置行 P[pos]（另一张表，每个位置一行），就是编码器读入的向量。"
    ),
    "embeddings.caption.rope": (
        "每个词元编号从一张可学习的表 E（词表大小 × d_model）中取出一行。这一行乘以 √d_model，"
        "就是编码器读入的向量：这个模型（RoPE）不给它加任何位置信息，而是在每个自注意力中"
        "按位置旋转查询和键。"
    ),
    "embeddings.caption.alibi": (
        "每个词元编号从一张可学习的表 E（词表大小 × d_model）中取出一行。这一行乘以 √d_model，"
        "就是编码器读入的向量：这个模型（ALiBi）不给它加任何位置信息，而是在每个自注意力中"
        "按两个词元之间的距离扣减得分，距离越远扣得越多。"
    ),
    "embeddings.caption.bert": (
        "每个词元编号从一张可学习的表 E（词表大小 × d_model）中取出一行。这个预训练模型再给它加上"
        "一个可学习的位置行和一个词元类型行，然后做层归一化：这就是编码器读入的向量（这里不乘 √d_model）。"
    ),
    "embeddings.lookup.header": "1 · 查表：词元 → 编号 → E 的一行",
    "embeddings.lookup.explain": (
        "这里没有任何计算：编号只是一个行号。这张表和其他权重矩阵一样是可以训练的，"
        "所以训练会让用法相近的词元的行彼此靠近。"
    ),
    "embeddings.metric.rows": "表的行数（源词表大小）",
    "embeddings.metric.width": "每一行的宽度（d_model）",
    "embeddings.lookup.table": "句子 {n} 个词元中的前 {shown} 个，以及它们那一行的前几个数：",
    "embeddings.rows.header": "句子中各词元的行：词元 × 维度",
    "embeddings.rows.trained": "训练好的权重：这些行是在学习把汉字转成拼音的过程中学到的。",
    "embeddings.rows.trained_task": "训练好的权重（{task!r} 任务）：这些行是在训练中学到的。",
    "embeddings.rows.pretrained": (
        "预训练权重（all-MiniLM-L6-v2）：这些行是从海量英文文本中学到的；"
        "这张表共有 {vocab} 个 WordPiece 行，包括 [CLS] 和 [SEP]。"
    ),
    "embeddings.rows.random": "随机权重：这些行只是随机数（种子 {seed}）——这里找不到任何规律；换一个种子，每一行都会变。",
    "embeddings.many_tokens": "共 {n} 个词元：超过 {limit} 个时，坐标轴只标出其中一部分。把鼠标移到格子上可以看到它的词元，拖动可以放大。",
    "embeddings.scale.header": "2 · 为什么要乘以 √d_model？",
    "embeddings.scale.explain": (
        "论文（第 3.4 节）把嵌入乘以 √d_model。表中的数很小（初始化时的分布范围随表的变大而缩小；"
        "这里它们的典型大小是 {rms}），而位置编码的每个数都是 [−1, 1] 之间的正弦或余弦，"
        "一行位置编码的长度是 √(d_model/2)。不乘这个因子，位置信息就会淹没词元信息；乘了之后，两者大小相当。"
    ),
    "embeddings.scale.explain.learned": (
        "论文（第 3.4 节）把嵌入乘以 √d_model，是为了不让词元行被正弦/余弦位置行淹没，"
        "位置行的每个数都在 [−1, 1] 之间。这个模型保留了这个因子，但位置表 P 是学出来的。"
        "P 和 E 的初始化方式相同，都是很小的随机数（这里它们的典型大小是 {rms_pe}，词元行是 {rms}），"
        "所以乘了因子之后词元部分更大，两张表之间的平衡由训练来决定。"
    ),
    "embeddings.scale.explain.in_attention": (
        "论文（第 3.4 节）把嵌入乘以 √d_model，是为了让词元行和加在它上面的正弦/余弦位置行大小相当。"
        "这个模型不加位置行（{scheme} 作用在每个自注意力内部），所以这里这个因子没有要平衡的东西："
        "它只是把每个输入向量拉长 √d_model 倍（表中数值的典型大小是 {rms}）。"
        "无论位置用哪种方式编码，Glassbox 的 Transformer 都保留论文的这个因子。"
    ),
    "embeddings.metric.norm_lookup": "‖E[id]‖ 的平均值（表中原样的行）",
    "embeddings.metric.norm_scaled": "‖E[id]·√{d}‖ 的平均值（乘以因子后）",
    "embeddings.metric.norm_pe": "‖PE(pos)‖ = √(d_model/2)",
    "embeddings.metric.norm_learned_pe": "‖P[pos]‖ 的平均值（可学习的位置）",
    "embeddings.metric.norm_normed": "层归一化输出长度的平均值（编码器读入的向量）",
    "embeddings.scale.share": "相加后的向量长度中，位置所占的比例：不乘因子时为 {without}，乘了之后为 {with_}（本句各向量长度的平均值）。",
    "embeddings.bert.header": "2 · 这里没有 √d_model：BERT 把三行相加，再做归一化",
    "embeddings.bert.explain": (
        "论文把表中的行乘以 √d_model，再加上固定的正弦/余弦编码。这个预训练模型（BERT 式）两样都不做。"
        "它加上一个**可学习的**位置行 P[pos]（另一张表，每个位置一行，最多 512 个位置），"
        "以及一个词元类型行 T[0]（BERT 可以同时读两个句子 A 和 B；这里总是只有一个句子，所以类型为 0）。"
        "然后**层归一化**让每个相加后的向量均值为 0、标准差为 1，再乘以可学习的缩放 γ、加上平移 β。"
    ),
    "embeddings.bert.why": (
        "为什么没有 √d_model？论文需要这个因子，是因为它的表 E 是学出来的，而 PE 是固定的，"
        "每个数都在 [−1, 1] 之间：要靠一个固定的因子让两者大小相当。这里位置表和词元表（还有 T）"
        "是一起学习的，训练会自己调好它们彼此的大小，所以不需要固定的因子来平衡它们。"
        "层归一化做不到这件事：它缩放的是整个和，而不是和里面词元部分和位置部分各占多少。"
    ),
    "embeddings.bert.share": (
        "‖E[id]‖ + ‖P[pos]‖ 中位置所占的比例：{share}（本句各向量长度的平均值）。"
        "层归一化之后向量变长了（平均长度 {normed}）：决定它们大小的是学到的 γ，而不是 √d_model。"
    ),
    "embeddings.norms.title": "**每个词元各个向量的长度**",
    "embeddings.hist.title": "**它们所有的数值**",
    "embeddings.similarity.header": "3 · 哪些词元的向量相似？",
    "embeddings.similarity.explain": "余弦相似度只比较方向：1 = 方向相同，0 = 互不相关（互相垂直），−1 = 方向相反。把向量放大或缩小不会改变它。",
    "embeddings.similarity.trained": (
        "训练好的权重：相似度反映了模型学会如何使用这些字：被模型同样对待的字，最终会有相似的行。"
        "[UNK] 词元（英文、表情符号……）共用同一行，所以它们之间的余弦值是 1。"
    ),
    "embeddings.similarity.trained_task": (
        "训练好的权重（{task!r} 任务）：相似度反映了模型学会如何使用它的词元：被模型同样对待的词元，最终会有相似的行。"
        "[UNK] 词元（任务词表之外的字符）共用同一行，所以它们之间的余弦值是 1。"
    ),
    "embeddings.similarity.pretrained": (
        "预训练权重：在相似上下文中使用的词片段，它们的行往往指向相近的方向，所以相关的词常常有明显为正的余弦值。"
        "每个 [UNK] 词元（英文词表中没有的字）都用同一行，重复出现的词元也显示为 1。"
    ),
    "embeddings.similarity.random": (
        "随机权重：这些相似度没有意义。高维空间中的随机向量几乎互相垂直，所以对角线以外的余弦值都在 0 附近"
        "（波动约为 1/√{d} ≈ {spread}）。这正是训练要改变的起点。只有重复出现的词元显示为 1。"
    ),
    "embeddings.cosine.title": "**各行之间的余弦相似度**",
    "embeddings.pca.title": "**二维平面上的各行（PCA）**",
    "embeddings.pca.caption": (
        "PCA：把 {d} 维的行投影到这些词元差别最大的两个方向上（坐标轴上的百分比表示每个方向保留了多少差异）。"
        "点越近 = 行越相似。"
    ),
    "embeddings.pca.one_token": "只有一个词元时，没有可以比较的对象。",
    "embeddings.table.position": "位置",
    "embeddings.table.token": "词元",
    "embeddings.table.id": "编号",
    "embeddings.axis.token": "词元",
    "embeddings.axis.dimension": "维度",
    "embeddings.axis.dimension_j": "维度 j",
    "embeddings.axis.value": "数值",
    "embeddings.axis.norm": "向量长度（L2 范数）",
    "embeddings.axis.entry": "数值",
    "embeddings.axis.count": "个数",
    "embeddings.axis.cosine": "余弦",
    "embeddings.axis.pc": "PC{n}（占方差的 {share}）",
    "embeddings.series.lookup": "E[id]，表中的行",
    "embeddings.series.scaled": "E[id]·√{d}，乘以因子后",
    "embeddings.series.normed": "LayerNorm(E + P + T)，编码器的输入",
    "embeddings.series.pe": "PE(pos)，位置编码",
    "embeddings.series.learned_pe": "P[pos]，可学习的位置",
    "embeddings.hist.lookup": "E[id] 的数值",
    "embeddings.hist.scaled": "E[id]·√{d} 的数值",
    "embeddings.hist.normed": "层归一化输出的数值",
    "embeddings.hist.pe": "位置编码的数值（在 [-1, 1] 内）",
    "embeddings.hist.learned_pe": "P[pos] 的数值",
    "embeddings.hist.range": "数值",
    # 模型文件夹（hf:<名称>）：它的配置说明它做什么；它是否训练过，没有任何文件能说明
    "embeddings.this_model": "这个模型",
    "embeddings.caption.folder.bert": (
        "每个词元编号从表 E（词表大小 × d_model）中取出一行。{model} 给它加上一个位置行 P[pos]"
        "（另一张表，共 {rows} 行）和一个词元类型行，然后做层归一化：这就是编码器读入的向量（这里不乘 √d_model）。"
    ),
    "embeddings.caption.unscaled.learned": (
        "每个词元编号从表 E（词表大小 × d_model）中取出一行。{model} 不把它乘以 √d_model，"
        "而是加上另一张表中的位置行 P[pos]（共 {rows} 行，它能读的每个位置一行）：E[id] + P[pos] 就是它第一层读入的向量。"
    ),
    "embeddings.caption.unscaled.in_attention": (
        "每个词元编号从表 E（词表大小 × d_model）中取出一行。{model} 既不把它乘以 √d_model，也不给它加位置："
        "这一行本身就是它第一层读入的向量。位置信息由 {scheme} 在每个自注意力内部加入。"
    ),
    "embeddings.rows.folder": (
        "权重读自模型文件夹 {model}。Glassbox 无法知道它们是否训练过"
        "（训练过的话，这些行存着训练的结果），还是存进文件夹的随机数。"
    ),
    "embeddings.unscaled.header.learned": "2 · 这里不乘 √d_model：这一行加上一个位置行",
    "embeddings.unscaled.header.in_attention": "2 · 这里不乘 √d_model，也不加位置：这一行原样使用",
    "embeddings.unscaled.explain.learned": (
        "论文把表中的行乘以 √d_model，因为它的位置编码是固定的，取值在 [−1, 1] 之间，这个因子让两者大小相当。"
        "{model} 没有这个因子：它的位置行 P[pos] 是另一张权重表（共 {rows} 行），与词元表的大小比例由训练决定，"
        "而不是由一个固定因子决定；两者之和不经层归一化直接进入第一层。这里的典型数值大小：E 中 {rms}，P 中 {rms_pe}。"
    ),
    "embeddings.unscaled.explain.in_attention": (
        "论文把表中的行乘以 √d_model，是为了让它和加在它上面的正弦/余弦位置行大小相当。"
        "{model} 不加位置行（{scheme} 在每个自注意力内部起作用），所以没有什么需要平衡："
        "它原样读入这一行，不乘因子，也不做层归一化（表中数值的典型大小是 {rms}）。"
    ),
    "embeddings.metric.norm_input": "‖E[id] + P[pos]‖ 的平均值（第一层读入的）",
    "embeddings.unscaled.share": "‖E[id]‖ + ‖P[pos]‖ 中位置所占的比例：{share}（平均长度，这个句子）。",
    "embeddings.bert.explain.folder": (
        "论文把表中的行乘以 √d_model，并加上固定的正弦/余弦编码。{model}（BERT 家族）两样都不做。"
        "它加上另一张权重表中的位置行 P[pos]（共 {rows} 行，每个位置一行）和一个词元类型行 T[0]"
        "（BERT 可以读两个句子 A 和 B；这里总是只有一个，所以类型是 0）。"
        "然后用**层归一化**让每个求和后的向量均值为 0、离散程度为 1，再乘以它的缩放 γ、加上平移 β。"
    ),
    "embeddings.similarity.folder": (
        "权重读自模型文件夹 {model}：Glassbox 无法知道它们是否训练过。如果训练过，用在相似语境中的词元的行往往指向相近的方向；"
        "如果是随机数，非对角线上的余弦值都接近 0（离散程度约为 1/√{d} ≈ {spread}）。无论哪种情况，重复的词元都显示 1。"
    ),
    "embeddings.series.input": "第一层读入的向量（不乘 √d_model）",
    "embeddings.hist.input": "第一层输入的数值",
    # 在这里训练的语言模型（任务 "lm"：小 GPT，或在“训练”页训练的模型）
    "embeddings.rows.lm": (
        "训练过的权重：这些行是在这里学到的：模型学习预测训练文本中的下一个词元"
        "（Debian 的 fortune 文件中的英文和中文名言、诗词与歌谣）。"
    ),
    "embeddings.similarity.lm": (
        "训练过的权重（一个语言模型）：相似度反映模型学会怎样使用它的词元：出现在相似上下文中的词元"
        "往往得到相似的行。它的字节级 BPE 没有 [UNK]：没有对应词元的字符都用字节拼出来。"
        "只有重复出现的词元才恰好是 1。"
    ),
    "embeddings.dims_from_0": "位置和维度都从 0 开始数，与论文的 PE(pos, 2i) 一致：E[id, 0] 是一行的第一个数。",
}
