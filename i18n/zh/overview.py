"""“总览”页（pages/overview.py）及其示意图（figures/overview.py）。"""

STRINGS = {
    "overview.caption": (
        "《Attention Is All You Need》（Vaswani 等，2017）：编码器读入句子，解码器一次写出一个词元，"
        "同时关注编码器的输出（memory）。"
    ),
    "overview.target.none": "（无：这个模型只有编码器，没有可以输入的解码器）",
    "overview.target.sentence": "（留空：随机权重的输出没有意义，不值得再送回模型，所以解码器读入的是句子本身）",
    "overview.target.greedy": "（留空：把模型自己贪心解码的输出送入解码器）",
    "overview.sentence": "句子（原样显示）",
    "overview.source_tokens": "{n} 个源词元",
    "overview.target": "目标",
    "overview.target_tokens": "{n} 个目标词元",
    "overview.stages": "各个阶段，每页讲一个",
    "overview.explain.title": "用公式读懂这张图",
    "overview.explain.encoder": (
        "**编码器（上面一行）。** 每个词元的编号从表 E 中取出一行。{positions}"
        "接着 N 个编码器层让每个词元去看其他所有词元（自注意力），不断改进自己的向量。"
        "最后得到每个词元一个向量，合称 **memory**。"
    ),
    "overview.explain.positions.sinusoidal": "再加上它所在位置的正弦/余弦向量 PE，模型才知道词序。",
    "overview.explain.positions.learned": "再加上它所在位置的一行可学习向量 P[pos]，模型才知道词序。",
    "overview.explain.positions.rope": (
        "这里不为位置加任何东西（RoPE）：词序是在每个自注意力内部进入模型的，查询和键会按各自的位置旋转。"
    ),
    "overview.explain.positions.alibi": (
        "这里不为位置加任何东西（ALiBi）：词序是在每个自注意力内部进入模型的，"
        "两个词元相距越远，它们的得分被扣得越多。"
    ),
    "overview.explain.in_attention.rope": (
        "RoPE 作用于每一个自注意力（编码器的自注意力和解码器带掩码的自注意力；交叉注意力从不使用）："
        "在计算 q·k 之前，每个头把查询和键的第 i 对维度旋转 pos·θ_i 的角度，于是得分取决于两个词元相距多远。"
    ),
    "overview.explain.in_attention.alibi": (
        "ALiBi 作用于每一个自注意力（编码器的自注意力和解码器带掩码的自注意力；交叉注意力从不使用）："
        "查询 i 和键 j 的得分加上 −m_h·|i − j|，每个头有自己的斜率 m_h。"
        "解码器加的是 −m_h·(i − j)，在掩码允许它看的地方两者完全相同。"
    ),
    "overview.explain.final_norm": (
        "这个模型在每一叠层的最后还有一次层归一化（编码器的这一次给出 memory，解码器的这一次给出 h）："
        "这是 torch.nn.Transformer 和 Annotated Transformer 的约定。前置归一化需要它，否则残差流从来不会被归一化；"
        "论文中的后置归一化模型没有这一步。"
    ),
    "overview.explain.bert_embedding": (
        "这个模型（BERT 式）不乘以 √d_model：它把可学习的位置行 P[pos] 和词元类型行 T[0] 加上去，"
        "再做一次层归一化。"
    ),
    "overview.explain.sublayer": (
        "每一层都有几个子层（先是注意力，然后是一个小的前馈网络），每个子层外面都包着残差连接和层归一化："
    ),
    "overview.explain.pre_norm": (
        "侧边栏选择了“前置”层归一化：归一化放在每个子层之前（论文放在之后）。"
        "如今大多数模型都这样做，更容易训练。"
    ),
    "overview.explain.decoder": (
        "**解码器（下面一行）。** 它读入目前已经写出的输出 y₁ … y_t。它的自注意力带有掩码，"
        "任何位置都看不到后面的内容；它的交叉注意力去看编码器的 memory。然后线性层 W 为词表中的每一项"
        "给出一个分数，softmax 把这些分数变成下一个词元的概率："
    ),
    "overview.explain.softmax": (
        "softmax(z)ᵢ = exp(zᵢ) / Σⱼ exp(zⱼ)：每个概率都是正数，而且加起来等于 1。"
        "写一个句子，就是选出一个词元，把它接到 y 后面，再运行一次解码器。"
    ),
    "overview.explain.no_decoder": (
        "这个模型只有编码器：没有解码器，也没有下一个词元的概率。它的输出就是 memory 本身，"
        "每个词元一个向量；sentence-transformers 把这些向量取平均，得到一个句向量，用来比较句子的意思。"
    ),
    "overview.diagram.sentence": "句子",
    "overview.diagram.encoder_input": "编码器的输入",
    "overview.diagram.n_tokens": "{n} 个词元",
    "overview.diagram.tokens_ids": "词元 → 编号",
    "overview.diagram.vocab": "词表 {n}",
    "overview.diagram.embedding": "嵌入 + 位置编码",
    "overview.diagram.embedding.learned": "嵌入 + P[pos]",
    "overview.diagram.embedding.only": "嵌入",
    "overview.diagram.learned_pos": "可学习位置",
    "overview.diagram.in_attention.rope": "RoPE：在自注意力中",
    "overview.diagram.in_attention.alibi": "ALiBi：在自注意力中",
    "overview.diagram.token_type": "类型",
    "overview.diagram.layer_norm": "层归一化",
    "overview.diagram.encoder": "{n}× 编码器层",
    "overview.diagram.encoder_detail": "自注意力<br>h={h}, d_k={d_k}<br>前馈网络 d_ff={d_ff}",
    "overview.diagram.target": "目标",
    "overview.diagram.target.given": "给定的目标",
    "overview.diagram.target.greedy": "贪心解码的输出",
    "overview.diagram.target.sentence": "句子本身",
    "overview.diagram.decoder": "{n}× 解码器层",
    "overview.diagram.decoder_detail": "带掩码的自注意力、<br>交叉注意力、<br>前馈网络",
    "overview.diagram.decoder_detail.final_norm": "带掩码的自注意力、<br>交叉注意力、<br>前馈网络 → 层归一化",
    "overview.diagram.output": "线性层 + softmax",
    "overview.diagram.output_detail": "下一个词元的概率",
    "overview.diagram.memory": "memory {shape}",
    "overview.diagram.memory_norm": "层归一化 →<br>memory {shape}",
    "overview.diagram.key": (
        "<b>S</b> = {S} 个源词元<br><b>T</b> = {T} 个目标词元<br>"
        "d_model = {d_model}<br>h = {h}, N = {N}<br>d_ff = {d_ff}"
    ),
    "overview.diagram.key_encoder": "<b>S</b> = {S} 个词元<br>d_model = {d_model}<br>h = {h}, N = {N}<br>d_ff = {d_ff}",
    "overview.diagram.vectors": "词元向量",
    "overview.diagram.vectors_detail": "每个词元一个",
    "overview.diagram.no_decoder": "没有解码器：这个模型只有编码器。<br>它的输出是每个词元一个向量。",
    "overview.target.one_stack": "（无：这个模型只有解码器，它唯一的堆栈读入句子本身）",
    "overview.stack_tokens": "{n} 个词元（堆栈全部读入）",
    "overview.explain.stack": (
        "**一个因果堆栈（一行）。** 每个词元的编号从表 E 中取出一行。{positions}接着 N 个层让每个词元"
        "去看它自己和它前面的词元（带掩码的自注意力；没有编码器，也没有交叉注意力），不断改进自己的向量。"
    ),
    "overview.explain.in_attention.rope.one": (
        "RoPE，作用在每个自注意力中：每个注意力头在计算 q·k 之前，把查询和键的第 i 对维度旋转 pos·θ_i 角度，"
        "因此得分取决于两个词元相距多远。"
    ),
    "overview.explain.in_attention.alibi.one": (
        "ALiBi，作用在每个自注意力中：查询 i 与键 j 的得分加上 −m_h·(i − j)，每个注意力头有自己的斜率 m_h。"
    ),
    "overview.explain.mqa": "多查询注意力：{h} 个查询头共用同一个键/值头（每个头读同一组键和值）。",
    "overview.explain.gqa": "分组查询注意力：{h} 个查询头共用 {kv} 个键/值头（每 {g} 个查询头读同一组键和值）。",
    "overview.explain.sublayer.one": (
        "每一层有两个子层（带掩码的自注意力，然后是使用 {act} 的前馈网络），每个子层都包裹在残差连接和 {kind} 中："
    ),
    "overview.explain.placement.pre": "这个模型的配置把 {kind} 放在每个子层之前（前归一化；论文放在之后）。",
    "overview.explain.placement.post": "这个模型的配置把 {kind} 放在每个子层之后（后归一化，与论文相同）。",
    "overview.explain.rms": "RMSNorm 就是不减均值、也不加偏移的层归一化：只有一个可学习的缩放 g。",
    "overview.explain.output.one": (
        "**输出。** 一个线性层 W 在每个位置为词表中的每一项给出一个分数，softmax 把这些分数变成下一个词元的概率。"
        "写文字就是选出一个词元，把它接在句子后面，再把堆栈运行一遍。"
    ),
    "overview.explain.tied": (
        "这个模型的输出矩阵就是它的嵌入表的转置（共享嵌入）：h_t 的方向越接近某个词元的嵌入行，"
        "这个词元越可能是下一个。"
    ),
    "overview.diagram.stack_input": "堆栈的输入",
    "overview.diagram.layer": "{n}× 层",
    "overview.diagram.masked_self_attn": "带掩码的自注意力",
    "overview.diagram.ffn": "前馈网络：{act}",
    "overview.diagram.no_encoder": "没有编码器，也没有交叉注意力：<br>一个因果堆栈读入句子。",
    "overview.diagram.gqa": "h = {h}（{kv} 个键/值头）",
    "overview.diagram.key_decoder": "<b>T</b> = {T} 个词元<br>d_model = {d_model}<br>{heads}, N = {N}<br>d_ff = {d_ff}",
}
