"""“完整模型”页（pages/model.py）及其图表（figures/model.py）的文字。

``model.fig.`` 下是图表文字；含 plotly ``%{...}`` 的是悬停模板，原样使用（不代入数值）。
"""

STRINGS = {
    "model.intro": (
        "注意力只是其中一个子层。它的周围还有：残差连接和层归一化、一个前馈网络，"
        "以及最后在整个词表上做的 softmax——解码器每次根据它选出一个词元。"
    ),
    "model.noise": "随机权重：这些数字是真实计算出来的，但图案只是噪声——还没有任何含义。",
    "model.url.invalid": "一个无效的值",
    "model.url.whole": "必须是 {lo} 到 {hi} 之间的整数",
    "model.url.number": "必须是 {lo} 到 {hi} 之间的数",
    "model.url.range": "对当前句子和模型大小，必须在 {lo} 到 {hi} 之间",
    "model.url.ignored": "已忽略网址中的 {key}={raw}（{why}）；改为显示 {value}。",
    "model.spinner.other_norm": "正在运行另一种层归一化位置…",
    "model.spinner.greedy": "正在贪心解码…",
    # the tabs (?model_view=<label>): one section at a time
    "model.tab.residual_ffn": "1–2 · 残差 + 层归一化、前馈网络",
    "model.tab.stream": "3 · 穿过各层",
    "model.tab.output": "4 · 输出概率",
    "model.tab.decoding": "5 · 贪心解码",
    # 1. 残差 + 层归一化
    "model.residual.header": "1 · 残差连接 + 层归一化",
    "model.residual.intro": (
        "每个子层（自注意力、前馈网络）都用同样的方式包裹起来：把它的输出**加**回它的输入"
        "（这条通路叫*残差流*），再由**层归一化**（LayerNorm）把每个向量调整为均值 0、方差 1"
        "（然后乘以可学习的缩放 γ，加上平移 β）。\n\n"
        "可以把残差流想成一个不断累加的和：子层只是在上面加一点修正，所以输入的信息永远不会丢失；"
        "训练时，误差信号也能沿着这条捷径直接传回最前面的层。"
    ),
    "model.residual.post": "**后归一化（post-norm）**（论文第 3.1 节）：对相加之后的和做归一化。",
    "model.residual.pre": "**前归一化（pre-norm）**（后来的模型，例如 GPT-2）：只对分支的输入做归一化。",
    "model.residual.layer": "编码器层",
    "model.residual.token": "源词元（位置）",
    "model.residual.token.help": "选择要在这一层中跟踪哪个词元的向量。",
    "model.residual.caption": "位置 {token} 上那个词元的向量穿过第 {layer} 个编码器层（共 {n} 层，{norm}-norm）的过程。这个词元是：",
    "model.residual.reading": (
        "从上往下读：蓝色行是残差流，橙色行是子层加上去的内容，绿色行是层归一化的输出。"
        "d = {d} 个数的均值为 0、方差为 1，意味着在乘 γ、加 β 之前，向量长度正好是 √{d} = {root}："
        "请留意绿色的条。"
    ),
    # 2. 前馈网络
    "model.ffn.header": "2 · 逐位置前馈网络",
    "model.ffn.relu": (
        "注意力让词元之间交换信息；前馈网络则**单独**处理每一个词元。"
        "同一个两层网络分别作用在每个词元上：d_model = {d_model} → d_ff = {d_ff} → d_model。"
        "热力图显示第 {layer} 个编码器层的隐藏层 max(0, xW₁ + b₁)；白色格子是被 ReLU 关掉的单元（恰好为 0）。"
    ),
    "model.ffn.gelu": (
        "注意力让词元之间交换信息；前馈网络则**单独**处理每一个词元："
        "d_model = {d_model} → d_ff = {d_ff} → d_model，每个词元用的是同一个网络。"
        "这个模型（和 BERT 一样）用 GELU 代替论文中的 ReLU：GELU 是一个平滑版的 ReLU，"
        "会让较小的负值通过（Φ(z) 是一个标准正态随机数不超过 z 的概率）。热力图显示第 {layer} 个编码器层的 GELU(xW₁ + b₁)（橙色为负，蓝色为正）。"
    ),
    "model.ffn.metric": "被关掉的隐藏单元（恰好为 0）",
    "model.ffn.metric.help": "在 词元数 × d_ff 个隐藏激活值中，恰好为 0 的比例。",
    "model.ffn.random_half": "随机权重下大约一半的单元被关掉：xW₁ + b₁ 的取值关于 0 对称。",
    "model.ffn.gelu_zero": "GELU 只有在输入恰好为 0 时才输出 0：它把负的输入压向 0，而不是直接截断。",
    "model.ffn.part": (
        "{n} 个词元 × {d_ff} 个单元的格子太多，无法全部画出：热力图只显示前 {units} 个单元"
        "（放大即可看清单个格子）。"
    ),
    # 3. 残差流穿过各层
    "model.stream.header": "3 · 残差流穿过各层：后归一化与前归一化",
    "model.stream.intro": (
        "把同样的观察扩展到整个编码器：每经过半层，词元向量的平均长度 ‖x‖ 是多少。"
        "**后归一化**时每个子层都以层归一化结束，在学到的缩放 γ 和平移 β 之前把长度拉回到 √d_model（虚线）；训练好的权重会让 γ、β 离开 1 和 0。"
        "**前归一化**时层归一化只作用于分支的输入，所以残差流本身会越来越长。"
    ),
    "model.stream.trained": (
        "训练好的权重：层归一化的位置由检查点决定（{norm}-norm）。"
        "在侧边栏切换到随机权重，就能并排比较后归一化和前归一化。"
    ),
    "model.stream.pretrained": (
        "预训练权重：层归一化的位置由模型决定（{norm}-norm，与论文相同）。"
        "它学到的 γ 不一定让长度保持在 √d_model。在侧边栏切换到随机权重，就能并排比较后归一化和前归一化。"
    ),
    "model.stream.random": (
        "同一组随机权重（种子 {seed}），层归一化分别放在每个子层之后（post）和之前（pre）。"
        "后归一化在每个子层之后都把残差流拉回到大约 √d_model；前归一化则不断往上累加，"
        "所以层数越多，向量越长（试试 6 层）。"
    ),
    "model.stream.final_norm": (
        "最后一步“层归一化 → memory”是编码器最后的那次层归一化，只在最后一层之后做一次："
        "这是 torch.nn.Transformer 和 Annotated Transformer 的约定，这个模型也采用了。"
        "前置归一化需要它（否则残差流从来不会被归一化）；论文中的后置归一化模型没有这一步，"
        "那里 memory 就是最后一层的输出。"
    ),
    # 4. 输出概率
    "model.output.header": "4 · 输出概率",
    "model.encoder_only": (
        "{model} 只有编码器：它没有解码器，也没有输出层，所以既没有下一个词元的概率，也没有可解码的内容（第 4–5 节）。"
        "下面的标签页展示的是它的编码器。在侧边栏选择随机权重或训练好的权重，即可看到解码器如何工作。"
    ),
    "model.output.intro": (
        "解码器在位置 *i* 的最后一个向量先经过一个线性层（给每个目标词元打一个分数，称为 *logit*），"
        "再经过 softmax：softmax 能把任意一组分数变成加起来等于 1 的正数。"
        "logit 先除以温度 *T*：*T* < 1 让分布更尖锐，*T* > 1 让分布更平坦。"
        "**贪心解码取概率最大者（argmax），任何温度都不会改变它**；采样则按这些条形的概率抽取，"
        "所以结果取决于 *T*。"
    ),
    "model.output.position": "解码器位置",
    "model.output.topk": "显示概率最高的前 k 个词元",
    "model.output.temperature": "温度 T",
    "model.output.reads.target": "侧边栏中给出的目标句子（教师强制）",
    "model.output.reads.own": "模型自己贪心解码的输出",
    "model.output.reads.sentence": "句子本身（随机权重：把它自己的输出喂回去没有意义）",
    "model.output.caption": "解码器读入的是{reads}。位置 {position} 已经看到下面这些词元，并据此给出下一个词元：",
    # 5. 贪心解码
    "model.greedy.header": "5 · 贪心解码，一步一步来",
    "model.greedy.intro": (
        "解码器一次写出一个词元。它从 [BOS] 开始；每一步都读入目前已经写出的全部内容"
        "（以及编码器的记忆 memory），选出概率最大的下一个词元接在后面，直到写出 [EOS] 为止。"
        "论文用的是束搜索（beam search）：它同时保留 4 个最好的未完成输出，而不是只保留最好的一个。"
    ),
    "model.greedy.own": "解码器从 [BOS] 出发，把每次选出的词元作为下一步的输入喂回去。",
    "model.greedy.on_demand_target": "这里按需单独解码（侧边栏给出了目标句子，所以其他视图用的是教师强制）。",
    "model.greedy.on_demand_random": "这里按需单独解码（侧边栏选的是随机权重，所以其他视图读入的是句子本身）。",
    "model.greedy.noise": "随机权重：未经训练的模型输出的是噪声（常常是同一个词元不断重复）。",
    "model.greedy.capped": "这里解码 {steps} 步后停止（每一步都要保存完整的记录，再多内存就放不下了）。",
    "model.greedy.step": "第 t 步",
    "model.greedy.step.help": "第 t 步根据前缀 [BOS] y₁ … yₜ₋₁ 生成第 t 个词元。",
    "model.greedy.head": "交叉注意力的头（0 = {h} 个头的平均）",
    "model.greedy.prefix": "第 {step} 步（共 {n} 步）：目前为止的前缀",
    "model.greedy.chosen": "选出的（概率最大的）下一个词元",
    "model.greedy.bars_title": "第 {step} 步的下一个词元（T = 1）",
    "model.greedy.heads_mean": "各头的平均",
    "model.greedy.head_no": "第 {head} 个头",
    "model.greedy.cross_caption": "第 {step} 步、最后一个解码器层的交叉注意力（{which}）：行 = 目前为止的解码器位置，列 = 源词元",
    "model.greedy.rows": "每一行是这一步中的一个解码器位置；最后一行就是选出这个词元的那一行。",
    "model.greedy.diagonal": "训练好的 汉字→拼音 模型会看着它正在念的那个字：呈现一条对角线。",
    "model.greedy.output.header": "解码结果",
    "model.greedy.source": "源词元（{n} 个；未知字符显示为 [UNK]）",
    "model.greedy.output": "贪心解码输出（{n} 个词元）",
    "model.greedy.output_eos": "贪心解码输出（{n} 个词元，在 [EOS] 处停止）",
    "model.greedy.nothing": "（[EOS] 之前没有任何内容）",
    # figures/model.py
    "model.fig.stage.input": "x（层的输入）",
    "model.fig.stage.output": "{formula}（输出）",
    "model.fig.kind.stream": "残差流",
    "model.fig.kind.sublayer": "子层输出",
    "model.fig.kind.normed": "层归一化之后",
    "model.fig.residual.length": "长度 ‖v‖",
    "model.fig.residual.dims": "{d} 维中的前 {dims} 维",
    "model.fig.value": "数值",
    "model.fig.dimension": "维度",
    "model.fig.weight": "权重",
    "model.fig.probability": "概率",
    "model.fig.stream.embedded": "嵌入",
    "model.fig.stream.attn": "第{i}层 注意力",
    "model.fig.stream.ffn": "第{i}层 FFN",
    "model.fig.stream.memory": "记忆 memory",
    "model.fig.stream.memory_norm": "层归一化 → 记忆 memory",
    "model.fig.stream.line": "{norm}-norm",
    "model.fig.stream.hover": "平均 ‖x‖ = %{y:.4f}<br>最小 %{customdata[0]:.4f}，最大 %{customdata[1]:.4f}",
    "model.fig.stream.x": "编码器，逐个阶段",
    "model.fig.stream.y": "各词元 ‖x‖ 的平均值",
    "model.fig.ffn.hover": "词元 #%{y}<br>单元 %{x}<br>数值 %{z:.4f}",
    "model.fig.ffn.x": "隐藏单元（d_ff = {d_ff}）",
    "model.fig.ffn.x_part": "隐藏单元（d_ff = {d_ff} 中的前 {units} 个）",
    "model.fig.zero.hover": "%{customdata} #%{y}<br>%{x:.1%} 的单元为 0",
    "model.fig.zero.all": "全部：{share}",
    "model.fig.zero.x": "为 0 的单元",
    "model.fig.cross.x": "源词元（记忆 memory）",
    "model.fig.cross.y": "解码器位置",
    "model.fig.blocks": "{title}，按每 {k} 个一组取平均",
    # —— 某个模型自己的说法（ui/sections/model.py：Model.key）：“<key>.rms” 用于 RMSNorm 模型，“<key>.one”
    # 用于只有解码器的模型（一个因果堆栈）；按其配置选择
    "model.intro.one": (
        "注意力只是一个子层。它周围还有：带归一化（{kind}）的残差连接、前馈网络，最后是对整个词表的 softmax，"
        "给出下一个词元；模型把它接在后面，再读一遍。"
    ),
    "model.decoder_only": (
        "{model} 只有解码器：一个因果堆栈读入句子，没有编码器，也没有交叉注意力。下面的标签页跟随这个堆栈"
        "（按其配置：{norm}-norm，{kind}）、它的下一个词元概率以及生成过程。"
    ),
    "model.tab.residual_ffn.rms": "1–2 · 残差 + RMSNorm、前馈网络",
    "model.tab.decoding.one": "5 · 逐步生成",
    "model.residual.header.rms": "1 · 残差连接 + RMSNorm",
    "model.residual.intro.rms": (
        "每个子层（自注意力、前馈网络）都以同样的方式包裹：它的输出被**加到**它的输入上（即*残差流*），"
        "**RMSNorm** 把向量缩放到均方根为 1（再乘以一个可学习的缩放 g）。与层归一化不同，它不减去均值，"
        "也不加偏移。\n\n"
        "可以把残差流想成一个不断累加的和：子层只是加上一点修正，所以输入的信息不会丢失；"
        "训练时误差信号也有一条直通最前面几层的路径。"
    ),
    "model.residual.layer.one": "层",
    "model.residual.token.one": "词元（位置）",
    "model.residual.caption.one": "位置 {token} 上那个词元的向量穿过第 {layer} 层（共 {n} 层，{norm}-norm，{kind}）的过程。这个词元是：",
    "model.residual.reading.pre": (
        "从上往下读：蓝色行是残差流，橙色行是子层加上的量。前归一化中 {kind} 位于每个分支内部"
        "（它归一化的是子层读入的内容），所以残差流本身没有哪一行被归一化：子层不断往上加，它的长度随之增长。"
    ),
    "model.ffn.gelu_tanh": (
        "注意力让词元之间交换信息；前馈网络随后对每个词元**单独**处理：d_model = {d_model} → d_ff = {d_ff} "
        "→ d_model，每个词元用同一个网络。这个模型用 GELU（tanh 近似，即 GPT-2 用的那种）代替论文中的 ReLU："
        "一种平滑的 ReLU，会让较小的负值通过。热力图显示第 {layer} 层的 GELU(xW₁ + b₁)（橙色：负，蓝色：正）。"
    ),
    "model.ffn.swiglu": (
        "注意力让词元之间交换信息；前馈网络随后对每个词元**单独**处理：d_model = {d_model} → d_ff = {d_ff} "
        "→ d_model，每个词元用同一个网络。这个模型用 SwiGLU 代替论文中的 ReLU：第三个矩阵 W_g 生成一个门 "
        "SiLU(xW_g)，按单元缩放 xW₁。热力图显示第 {layer} 层的这个乘积 SiLU(xW_g) ⊙ xW₁（橙色：负，蓝色：正）。"
    ),
    "model.ffn.swiglu_zero": "只有当门或 xW₁ 恰好为 0 时，SwiGLU 单元才为 0：门是压缩而不是截断，乘积也可以是负的。",
    "model.stream.header.one": "3 · 残差流穿过各层",
    "model.stream.intro.one": (
        "这个唯一的堆栈中，每半层之后词元向量的平均长度 ‖x‖。{kind} 放在哪里决定了长度的变化："
        "放在每个子层之后（后归一化），它把长度拉回 √d_model（虚线，乘上可学习的缩放之前）；"
        "放在每个子层之前（前归一化），它只作用于分支的输入，所以残差流本身不断增长。"
    ),
    "model.stream.folder": (
        "权重从模型文件夹 {name} 加载：归一化的位置由它的配置决定（{norm}-norm，{kind}）。"
        "把侧边栏切换到随机权重，可以并排比较后归一化和前归一化。"
    ),
    "model.stream.final_norm.one": "最后一步是堆栈最后的 {kind}，在最后一层之后只做一次：得到 h，也就是输出层读入的内容。",
    "model.output.intro.one": (
        "堆栈在位置 *i* 的最后一个向量经过一个线性层（词表中每个词元一个分数，称为 *logit*）和 softmax，"
        "softmax 把任意一组分数变成加起来等于 1 的正数：每个词元作为下一个词元的概率。温度 *T* 先除 logits："
        "*T* < 1 使分布更尖锐，*T* > 1 使其更平坦。贪心生成取 argmax，任何温度都不会改变它；"
        "采样（第 5 个标签页）从这些柱子中抽取（如果选了 top-k 和 top-p，则先按它们过滤）。"
    ),
    "model.output.position.one": "位置",
    "model.output.reads.prompt": "句子本身",
    "model.output.caption.one": "这个模型唯一的堆栈读入{reads}。位置 {position} 已经看到这些词元，并给出下一个词元：",
    "model.output.table.header": "每个位置之后的下一个词元",
    "model.output.table.caption": (
        "每个位置预测它后面的词元（T = 1，所有位置来自同一次运行）：最可能的那个，以及模型给句子中"
        "真正跟在后面的词元的概率。"
    ),
    "model.gen.header": "5 · 逐步生成",
    "model.gen.intro": (
        "模型一次接上一个词元来写：它读入句子和目前写出的全部内容，最后一个位置的 logits *z* 给出下一个"
        "词元的分布。**温度** *T* 除 logits（*T* = 0：每步都取最可能的词元，即贪心）；**top-k** 只保留最可能的 "
        "*k* 个词元；**top-p** 按概率从高到低保留词元，直到它们的概率加起来达到 *p*。然后由一个从**种子**开始的"
        "随机数生成器从剩下的词元中抽取：同一个种子得到同样的文字。"
    ),
    "model.gen.spinner": "正在生成……",
    "model.gen.none": "没有生成任何词元：句子已经占满了这个模型的全部位置。",
    "model.gen.temperature": "温度 T（0 = 贪心）",
    "model.gen.temperature.help": "0 表示每一步都取最可能的词元（这时 top-k 和 top-p 不起作用）。",
    "model.gen.top_k": "Top-k（0 = 不用）",
    "model.gen.top_k.help": "抽取之前只保留最可能的 k 个词元。",
    "model.gen.top_p": "Top-p（1 = 不用）",
    "model.gen.top_p.help": "按概率从高到低保留词元，直到概率之和达到 p（最可能的那个总会保留）。",
    "model.gen.seed": "种子",
    "model.gen.seed.help": "随机数生成器的起点，用来抽取每个词元：同一个种子，同样的文字。",
    "model.gen.tokens": "新词元（最多）",
    "model.gen.greedy": "贪心",
    "model.gen.sampled": "用种子 {seed} 采样",
    "model.gen.prompt": "句子（{n} 个词元）",
    "model.gen.output": "模型在后面写出的内容（{n} 个词元，{how}）",
    "model.gen.output_eos": "模型在后面写出的内容（{n} 个词元，{how}；在它的文本结束词元处停止）",
    "model.gen.step": "第 t 步",
    "model.gen.step.help": "第 t 步根据句子和之前的 t − 1 个新词元选出第 t 个新词元。",
    "model.gen.step_prefix": "第 {step} 步（共 {n} 步）：模型读入的内容",
    "model.gen.chosen": "选中的词元",
    "model.gen.unfiltered": "T = 1，未过滤",
    "model.gen.bars_title": "第 {step} 步的下一个词元",
    "model.gen.bars_caption": (
        "柱子：抽取该词元时所用的分布（经过温度、top-k 和 top-p 之后；绿色为选中的词元）。"
        "竖线：同样这些词元在 T = 1、未做任何过滤时的概率。"
    ),
    "model.gen.table": "每一步：选中的词元、它在被抽取的分布中的概率，以及这个分布保留了多少个词元。",
    "model.fig.stream.h": "h",
    "model.fig.stream.h_layer": "层归一化 → h",
    "model.fig.stream.h_rms": "RMSNorm → h",
    "model.fig.stream.x_one": "整个堆栈，逐个阶段",
    "model.fig.next.position": "位置",
    "model.fig.next.token": "词元",
    "model.fig.next.best": "最可能的下一个",
    "model.fig.next.best_p": "它的概率",
    "model.fig.next.actual": "实际的下一个",
    "model.fig.next.actual_p": "它的概率（实际的下一个）",
    "model.fig.gen.step": "步",
    "model.fig.gen.chosen": "选中的词元",
    "model.fig.gen.p": "概率（抽取时）",
    "model.fig.gen.kept": "保留的词元数",
    "model.gen.as_text": "同样的词元读成文本（被拆到几个词元里的字符重新拼合）：",
    "model.gen.no_text": "（没有内容：它只写出了文本结束词元）",
    "model.dims_from_0": "位置和维度都从 0 开始数，与论文的 PE(pos, 2i) 一致；层从 1 开始数。",
}
