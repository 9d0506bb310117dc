"""“位置编码”页（pages/positional.py）及其图表（figures/positional.py）。"""

STRINGS = {
    # -- 图表 ----------------------------------------------------------------------------------------
    "positional.fig.dim_label": "维度 {dim}（{kind}，周期 {period:,.1f}）",
    "positional.fig.seen_in_training": "训练中见过（0–{last}）",
    "positional.fig.example_training": "假如用 {n} 个位置训练（举例）",
    "positional.fig.sentence_end": "本句结束（{n} 个词元）",
    "positional.fig.no_rows": "从位置 {n} 起没有对应的行：报错",
    "positional.fig.axis.pos": "位置 pos",
    "positional.fig.axis.position": "位置",
    "positional.fig.axis.dimension": "维度",
    "positional.fig.axis.position_p": "位置 p",
    "positional.fig.axis.position_q": "位置 q",
    "positional.fig.axis.offset": "偏移 k",
    "positional.fig.axis.distance": "距离 k = i − j",
    "positional.fig.axis.query_i": "查询位置 i",
    "positional.fig.axis.key_j": "键位置 j",
    "positional.fig.hover.pos": "位置",
    "positional.fig.hover.dim": "维度",
    "positional.fig.hover.token": "词元",
    "positional.fig.hover.position": "位置",
    "positional.fig.hover.angle": "角度",
    "positional.fig.hover.head": "第 {h} 个头",
    "positional.fig.hover.query_i": "查询 i",
    "positional.fig.hover.key_j": "键 j",
    "positional.fig.hover.bias": "偏置",
    "positional.fig.value": "数值",
    "positional.fig.dot": "点积",
    "positional.fig.bias": "加到分数上的偏置",
    "positional.fig.sum.input": "和 = 编码器的输入",
    "positional.fig.rope.pair_title": "第 {i} 对：每个位置转 θ = {theta:.3g} 弧度",
    "positional.fig.rope.turn_name": "第 {i} 对（每 {period:,.0f} 个位置转一整圈）",
    "positional.fig.rope.angle_axis": "角度 p·θ_i（对 2π 取余）",
    "positional.fig.rope.highest": "第 {i} 对在训练中到过的最大角度",
    "positional.fig.rope.score_axis": "分数 (R_p x)·(R_(p+k) x)/√d_k",
    "positional.fig.alibi.head_title": "第 {h} 个头<br>m = {m}",
    "positional.fig.alibi.line_name": "第 {h} 个头（m = {m}）",
    "positional.fig.alibi.offset_axis": "偏置(p, p+k)，第 1 个头",
    "positional.fig.learned.dim_name": "维度 {dim}",
    # -- URL 检查 ------------------------------------------------------------------------------------
    "positional.notice.too_many_dims": "pe_dims 给了 {n} 个维度，只显示前 {limit} 个。",
    "positional.notice.bad_dims": (
        "已忽略 pe_dims={values}（维度必须是 0 到 {last} 之间的整数）；现在显示维度 {dims}。"
    ),
    "positional.notice.bad_max_pos": (
        "已忽略 pe_max_pos={value}（必须是 {lo} 到 {hi} 之间的整数）；改用 {default}。"
    ),
    "positional.notice.dims_removed": "d_model 现在是 {d}：维度 {dropped} 已不存在，已被移除。",
    # -- 页面 ----------------------------------------------------------------------------------------
    "positional.caption": (
        "注意力会拿每个词元和其他所有词元比较，但它本身不管顺序：“狗咬人”和“人咬狗”在它看来一模一样。"
        "所以必须告诉模型每个词元在哪个位置。第 1–4 节：论文的做法，给每个位置一个向量，加到词元的向量上。"
        "第 5 节：如今的模型常用的另外三种做法。"
    ),
    "positional.not_sinusoidal": (
        "这个模型（{model}）没有用论文里的正弦位置编码：它的位置方案是“{scheme}”。"
        "第 1–3 节仍然讲解正弦编码；第 5 节展示这个模型自己的方案。"
    ),
    "positional.curves.header": "1 · 每对维度一个正弦、一个余弦",
    "positional.curves.explain": (
        "每一对维度 (2i, 2i+1) 以自己的速度 ω_i = 1/10000^(2i/d_model) 旋转：第一对每 2π ≈ 6.3 个位置重复一次，"
        "而 {d} 个维度中的最后一对要 {slowest:,.0f} 个位置才重复一次。就像钟表的指针，快针和慢针合在一起，"
        "让每个位置都有独一无二的样子。"
    ),
    "positional.curves.dims": "要画的维度（0 … {last}，最多 {limit} 个）",
    "positional.curves.max_pos": "画多少个位置",
    "positional.curves.max_pos.help": "默认 {default}。这个公式对每个位置都有定义，远远超出任何句子的长度。",
    "positional.curves.none": "没有选择维度：在上面选一个或几个，就能看到它的曲线。",
    "positional.curves.trained": (
        "训练好的权重：模型只在短语上训练过（最多 {chars} 个字；位置 0–{last}，即阴影部分）。"
        "曲线在任何位置都平滑地延续下去，但模型从未见过更大偏移下的注意力模式，所以别指望它能处理长输入。"
    ),
    "positional.curves.trained_digits": (
        "训练好的权重：模型只在数字序列上训练过（最多 {chars} 个数字；位置 0–{last}，即阴影部分）。"
        "曲线在任何位置都平滑地延续下去，但模型从未见过更大偏移下的注意力模式，所以别指望它能处理长输入。"
    ),
    "positional.curves.random": (
        "随机权重：什么都没有训练过，所以对模型来说没有哪个位置是“熟悉”的。（随附的训练好的模型只见过几个字的短语。）"
        "位置编码本身不需要训练：它是一个固定的公式，对每个位置都有定义。"
    ),
    "positional.curves.pretrained": (
        "这个预训练模型并不加这些曲线：它学了自己的一张 {rows} 行的表（第 5 节“可学习”）。这里的曲线仅供对比。"
    ),
    "positional.table.header": "2 · 整张表：位置 × 维度",
    "positional.table.caption": (
        "每一行是一个位置（0–{last}），每一列是 {d} 个维度之一。左边的列在相邻行之间变化很快（快的维度对），"
        "右边的列几乎不变（慢的维度对）：相邻的位置得到相似的行。"
    ),
    "positional.shift.header": "3 · 为什么有效：平移 k 就是一次旋转",
    "positional.shift.explain": (
        "每个 2×2 小块把一对 (sin, cos) 转过角度 k·ω_i。M_k 只取决于偏移 k，与 p 无关："
        "一层网络只要学会一次“往回看 k 个词元”，就能在每个位置上使用。而且两个位置的点积只取决于它们相距多远："
    ),
    "positional.shift.even": (
        "这要求 d_model 是偶数：每个正弦都需要一个余弦搭档。d_model 为奇数时，最后一维是落单的正弦，"
        "点积就会依赖于 p。所以侧边栏只提供偶数大小。"
    ),
    "positional.shift.metric": "p < 64 时 |M₅·PE(p) − PE(p+5)| 的最大值",
    "positional.shift.metric.help": "这里用模型自己的表计算：除了 float32 的舍入误差外就是零。",
    "positional.shift.gram": (
        "位置 0–63 的 PE·PEᵀ：每条对角线（相同的偏移 p − q）颜色都一样。第 5 节（“正弦”，b）把同样的数画成曲线。"
    ),
    "positional.sum.header": "4 · 编码器的输入",
    "positional.sum.no_sentence": "在侧边栏输入一句话，就能看到它的词元嵌入、对应的位置编码行以及两者之和。",
    "positional.sum.caption": (
        "左：词元乘过因子的那一行（见“词嵌入”页）；中：上表中它所在位置的那一行；右：两者之和，"
        "正是模型的输入（trace.src_embedded）。三幅图共用一个颜色刻度。"
    ),
    "positional.sum.caption.random": " 随机权重：左图只是随机数；中间的位置编码无论如何都是精确的。",
    "positional.sum.caption.learned": (
        "左：词元的那一行（不乘因子）；中：学到的位置行 P[pos]；右：编码器读入的向量，"
        "层归一化(E + P + T[0])（T：词元类型行），正是 trace.src_embedded。"
    ),
    "positional.sum.caption.learned_scaled": (
        "左：词元放大后的行 E[id]·√d_model；中：这个模型学到的位置行 P[pos]（不是上面的正弦表）；"
        "右：两者之和，正是模型的输入（trace.src_embedded）。随机权重：训练之前这两行都是随机数。"
    ),
    "positional.sum.title.lookup": "E[id]",
    "positional.sum.title.learned": "P[pos]（可学习）",
    "positional.sum.title.normed": "层归一化(E + P + T) = 编码器的输入",
    "positional.sum.in_attention": (
        "这个模型不往嵌入上加任何东西（位置方案“{scheme}”在注意力内部起作用）：编码器的输入就是乘过因子的查表结果。"
    ),
    "positional.sum.no_positions": (
        "这个模型在嵌入上什么都不加，而 d_k = 1 时它的 RoPE 也什么都不旋转：编码器的输入只是乘过因子的查表结果，"
        "没有任何位置信息进入编码器。"
    ),
    "positional.many_tokens": "共 {n} 个词元：坐标轴上每 {step} 个只标一个；把鼠标移到一行上可以看到它的词元，拖动可以放大。",
    # -- 第 5 节：四种方案 ---------------------------------------------------------------------------
    "positional.schemes.header": "5 · 告诉模型词元位置的四种方法",
    "positional.schemes.intro": (
        "论文给每个词元加上一个固定的向量。后来的模型改变了位置信息进入的地方：BERT 和 GPT-2 把这些向量学出来"
        "（“可学习”）；LLaMA、Qwen 和大多数新模型在注意力内部旋转查询和键（“RoPE”）；BLOOM 给分数加上一个随距离增大的惩罚"
        "（“ALiBi”）。每种方法都看三点：(a) 它怎样影响注意力分数；(b) 分数是否只取决于两个词元之间的距离；"
        "(c) 超过训练时见过的最长序列之后会怎样。"
    ),
    "positional.schemes.sizes": (
        "按这个模型的头的大小来画：d_model = {d}，h = {h} 个头，d_k = {d_k}；训练长度 L = {L}{example}。"
    ),
    "positional.schemes.example": "（举例：这些权重没有在句子上训练过）",
    "positional.table.col.scheme": "方法",
    "positional.table.col.where": "进入的位置",
    "positional.table.col.relative": "分数只取决于 i − j？",
    "positional.table.col.beyond": "比 max_len 更长时",
    "positional.table.where.added": "加到嵌入上，只加一次",
    "positional.table.where.rotate": "在每个自注意力中旋转 q 和 k",
    "positional.table.where.bias": "在每个自注意力的分数上加 −m·|i − j|",
    "positional.table.relative.sinusoidal": "PE·PE 是；完整的分数里还混有绝对位置",
    "positional.table.relative.learned": "不保证",
    "positional.table.relative.yes": "是，完全如此",
    "positional.table.beyond.formula": "能运行（公式对每个位置都有定义）",
    "positional.table.beyond.error": "报错：没有对应的行",
    "positional.table.beyond.runs": "能运行",
    "positional.tab.sinusoidal": "正弦",
    "positional.tab.learned": "可学习",
    "positional.tab.rope": "RoPE",
    "positional.tab.alibi": "ALiBi",
    "positional.tab.current": "{name} ✓ 本模型",
    "positional.part.reach": "(a) 它怎样影响分数",
    "positional.part.relative": "(b) 分数是否只取决于距离？",
    "positional.part.beyond": "(c) 超过训练长度之后",
    "positional.metric.spread": "曲线之间的最大差",
    "positional.metric.spread.help": (
        "对每个偏移 k，取各个起始位置 p 上的最大值减最小值；再取其中最大的。0 表示：只有距离 k 起作用。"
    ),
    # 正弦
    "positional.sin.reach": (
        "位置向量只在最底层加一次，加到词元的向量上。之后每一层看到的都是词元和位置混在一起的一个向量。"
        "在第一层的分数里，两个“和”相乘会得到四项：内容·内容、内容·位置、位置·内容、位置·位置。"
        "上面第 1–4 节展示了这些向量本身。"
    ),
    "positional.sin.relative": (
        "位置·位置这一项只取决于偏移 k：从不同起始位置 p 出发的曲线完全重合。"
        "（其余三项仍然带有绝对位置，模型需要学会忽略或利用它们。）"
    ),
    "positional.sin.beyond": (
        "公式对每个位置都给出一个向量，所以更长的输入也能运行（模型会为更长的长度算出这张表）。"
        "但在阴影部分之后，慢的维度会取到训练好的各层从未见过的值：模型能运行，但往往效果很差。"
    ),
    # 可学习
    "positional.learned.reach": (
        "和正弦编码在同一个地方：把表 P 的一行加到词元的向量上。但 P 不是公式，而是一个权重矩阵，"
        "每个位置 0 … max_len − 1 各占一行，和词元表 E 一样通过反向传播学出来。"
    ),
    "positional.learned.reach.minilm": (
        "这是 all-MiniLM-L6-v2 真实的表：{rows} 行 × {d} 维（每 {step} 行画一行）。"
        "排在前面的行每个句子都会用到，所以训练得最多。"
    ),
    "positional.learned.reach.random": (
        "一张 {rows} 行的表在训练之前的样子：只是随机数，没有规律。（在侧边栏选择 MiniLM 权重，就能看到从真实文本中学到的表。）"
    ),
    "positional.learned.relative": (
        "可学习的表里没有任何东西强制 P[p]·P[p+k] 只取决于 k：它是训练留下的样子。"
        "从不同起始位置 p 出发的曲线并不重合。"
    ),
    "positional.learned.relative.minilm": " 在 MiniLM 的表里，k = 0 附近这些曲线相近（相邻位置学到了相似的行），但并不相等。",
    "positional.learned.beyond": (
        "位置 max_len 及以后根本没有对应的行：模型会拒绝更长的输入并报错（“sequence length … exceeds max_len=…”）。"
        "正因如此，类似 BERT 的模型会把长文本截断到 512 个词元。"
    ),
    # RoPE
    "positional.rope.reach": (
        "嵌入上什么都不加。在每个自注意力头内部，一个词元的查询和键会转过一个随位置增大的角度："
        "维度对 (2i, 2i+1) 转过 p·θ_i。旋转不改变向量的长度，所以位置只体现在角度上。"
    ),
    "positional.rope.reach.panels": "这几幅图把同一个二维向量按位置 0–7 旋转：一个快的维度对（每个位置 1 弧度）和几个慢的。",
    # d_k = 1 的 RoPE（d_model 16，16 个头）：没有可以旋转的维度对
    "positional.rope.no_pair.model": (
        "这个模型分不出源句中词元的位置。RoPE 旋转的是成对的维度，而 d_model = {d_model}、{h} 个头时，每个头只有 "
        "d_k = 1 维：没有维度对，所以 RoPE 什么也不旋转，嵌入上也什么都不加。把句子里的词元换个顺序，"
        "编码器的输出只是跟着换同样的顺序，解码器读到的东西完全一样（只有它的因果掩码还能区分目标序列里"
        "前后的词元）。选少一些头（d_k ≥ 2），RoPE 才有维度对可以旋转。"
    ),
    "positional.rope.no_pair.other": (
        "在这个头的大小下（d_k = 1），RoPE 什么也不会旋转：它旋转的是成对的维度，而只有一维的头没有维度对，"
        "所以这种大小的 RoPE 模型分不出位置。（这个模型用另一种方式加入位置：见它自己的标签页。）"
    ),
    "positional.rope.no_pair.sidebar": (
        "d_k = 1：一个头没有可以旋转的维度对，所以 RoPE 不起作用，这个模型分不出位置。请选少一些头。"
    ),
    "positional.rope.no_pair.relative": (
        "d_k = 1 时什么都不转：同一个向量的得分在每个偏移、每个位置都一样（水平直线）。"
    ),
    "positional.rope.no_pair.beyond": (
        "没有维度对在转，所以更长的输入也不会带来新的角度：无论在训练长度之内还是之外，每个位置看起来都和其他位置一样。"
    ),
    "positional.rope.cross": (
        "这里交叉注意力不做旋转：解码器和编码器的位置属于两个不同的句子，它们的差没有意义。编码器的输出本身已经带有位置信息。"
    ),
    "positional.rope.relative": (
        "把查询转 m·θ、把键转 n·θ，等于只把键转 (n − m)·θ：分数只取决于距离 n − m。"
        "图中的曲线（同一个向量既作查询又作键，放在位置 p 和 p + k）完全重合。"
    ),
    "positional.rope.beyond": (
        "任何位置都有一个角度，所以更长的输入也能运行。在训练长度内就转满一圈的维度对，已经把圆上的每个角度都走过了，"
        "之后的位置对它来说没有新东西。更慢的维度对却没有：超过训练长度后，它会越过训练中到过的最大角度（虚线），"
        "进入训练好的各层从未见过的角度。这就是普通 RoPE 在更长输入上效果变差的原因，"
        "也是长上下文模型要“拉伸”这些角度（位置插值、NTK、YaRN）的原因。"
    ),
    # ALiBi
    "positional.alibi.reach": (
        "嵌入上什么都不加，q 和 k 也保持不变。每个头给分数加上一个惩罚：−m_h 乘以查询和键之间的距离。"
        "每个头有自己的斜率 m_h：斜率大的头只看近邻，斜率小的头能看得很远。"
    ),
    "positional.alibi.rule.power": (
        "H = {H} 个头，是 2 的幂：斜率是等比数列 m_h = 2^(−8h/{H})，h = 1 … {H}。这里：m = {slopes}。"
    ),
    "positional.alibi.rule.other": (
        "H = {H} 个头不是 2 的幂，所以斜率不是一个等比数列。和 Press 等人的代码（以及 BLOOM 的）一样："
        "第 1–{low} 个头取 {low} 个头的模型的斜率 2^(−8h/{low})，其后的头（这里是第 {rest} 个）取 {high} 个头的"
        "模型隔一个取一个的斜率（2^(−8h/{high}) 中 h = 1, 3, 5, …）。这里：m = {slopes}。"
    ),
    "positional.alibi.causal": "解码器（因果）形式：−m·(i − j)",
    "positional.alibi.causal.help": (
        "在解码器中，查询只能看到更早的键（j ≤ i），在那里 −m·(i − j) 和 −m·|i − j| 相等；被因果掩码遮住的格子留空。"
    ),
    "positional.alibi.cross": (
        "只有自注意力加这个偏置；这里交叉注意力不加（解码器和编码器的位置在两个不同的句子里，i − j 没有意义）。"
        "解码器用 −m·(i − j)，在因果掩码允许看的地方它和 −m·|i − j| 完全相同。"
    ),
    "positional.alibi.relative": (
        "偏置只是 i − j 的函数：从任何起始位置出发的曲线都完全重合（一条直线：距离每多一步，惩罚就多 m）。"
    ),
    "positional.alibi.beyond": (
        "更长的输入也能运行，而且不会出现新东西：这些直线只是继续延伸，更远的词元只会得到更小的权重。"
        "Press 等人（“Train Short, Test Long”）用 1,024 个词元训练，在更长的序列上测试，效果几乎不降，而其他方法做不到这一点。"
    ),
    # 模型文件夹（hf:<名称>）：它的配置说明它做什么；它是否训练过，没有任何文件能说明
    "positional.curves.folder": "{model} 不加这些曲线：它的位置方案是“{scheme}”（见第 5 节）。这些曲线只是作对比。",
    "positional.curves.folder.rows": "它的位置表共有 {rows} 行，它能读的每个位置一行。",
    "positional.sum.header.one_stack": "4 · 第一层的输入",
    "positional.sum.in_attention.unscaled": (
        "这个模型不给词嵌入加任何东西（位置方案“{scheme}”在注意力内部起作用），也不把它们乘以 √d_model："
        "它的第一层只读查表得到的 E[id]。"
    ),
    "positional.sum.title.input": "E + P = 第一层的输入",
    "positional.sum.caption.unscaled": (
        "左：词元的行 E[id]（不缩放）；中：模型位置表中它所在位置的行 P[pos]（不是上面的正弦表）；"
        "右：两者之和，正是第一层读入的内容（没有层归一化）。"
    ),
    "positional.schemes.sizes.folder": (
        "按这个模型的头大小绘制：d_model = {d}，h = {h} 个头，d_k = {d_k}；L = {L}，"
        "即它的配置允许的位置数（max_position_embeddings），图中把它当作训练长度。"
    ),
    "positional.learned.reach.folder": "这是 {model} 的位置表，读自它的文件夹：{rows} 行 × {d} 维（每 {step} 行画一行）。",
    "positional.rope.reach.half": (
        "词嵌入上什么也不加。在每个自注意力头内部，词元的查询和键按随位置增长的角度旋转："
        "这个模型把第 i 维和第 i + d_k/2 维（头的前一半和后一半）一起旋转 p·θ_i。"
        "旋转不改变向量的长度，所以只有角度携带位置信息。"
    ),
    "positional.rope.folder": (
        "{model} 用的基数是 θ = {theta}，旋转的维度对是 {pairs}。下面的图按 RoPE 论文的形式绘制"
        "（基数 10000，维度对 (2i, 2i+1)）：换一个基数会改变每一对旋转的快慢，换一种配对会改变哪些维度一起旋转，"
        "但旋转的作用不变。"
    ),
    "positional.rope.pairs.half": "(i, i + d_k/2)",
    "positional.rope.pairs.interleaved": "(2i, 2i+1)",
    "positional.rope.cross.one_stack": "这个模型没有交叉注意力：RoPE 在每一层旋转它唯一的自注意力中的查询和键。",
    # 在这里训练的语言模型（任务 "lm"：小 GPT，或在“训练”页训练的模型）
    "positional.curves.trained_lm": (
        "训练过的权重：这个语言模型是在这里训练的，每次读训练文本中 {n} 个词元的一个窗口"
        "（位置 0–{last}，阴影部分）。"
    ),
    "positional.curves.lm_own": "它不加这些曲线：它的位置方案是“{scheme}”（见第 5 节）。这些曲线只是作对比。",
    "positional.learned.reach.lm": (
        "这是这个模型真实的位置表，在这里用它的训练文本学到：{rows} 行 × {d} 维（每 {step} 行画一行）。"
        "它的训练窗口长 {n} 个词元，所以训练中只读到过第 0–{last} 行。"
    ),
    "positional.schemes.sizes.lm": (
        "按这个模型的头大小绘制：d_model = {d}，h = {h} 个头，d_k = {d_k}；训练长度 L = {L}，"
        "即训练时每个窗口的词元数。"
    ),
    "positional.dims_from_0": "位置和维度都从 0 开始数，与论文的 PE(pos, 2i) 一致：第 0 维是第一个正弦，第 1 维是第一个余弦。",
}
