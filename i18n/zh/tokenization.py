"""“分词”页（pages/tokenization.py）及其图（figures/tokenization.py）。"""

STRINGS = {
    "tokenization.caption": (
        "字节对编码（BPE）：先把文本拆成字符（或字节），然后反复把训练文本中出现最多的一对相邻片段"
        "粘成一个新词元。这些按顺序记录下来的粘合步骤，即*合并*（merges），就是分词器本身。"
        "分词发生在模型之前：这里用不到任何权重。"
    ),
    "tokenization.caption.minilm": (
        "模型只能读懂它自己词表里的词元。预训练的 all-MiniLM-L6-v2 读的是 **WordPiece** 词元"
        "（BERT 的分词器），放在最前面；下面是我们自己模型所用的字节对编码（BPE），逐次合并地学出来。"
        "分词发生在模型之前：这里用不到任何权重。"
    ),
    "tokenization.training": "正在学习合并…",
    "tokenization.url.ignored": "已忽略网址中的 {key}={raw}（不是有效的值）；改用默认值。",
    "tokenization.url.step": "已忽略网址中的 tok_step={raw}（必须是 0 到 {n} 之间的整数）；显示第 {n} 步。",
    # 训练文本与设置
    "tokenization.source": "训练文本",
    "tokenization.source.corpus": "en_zh.txt（随附）",
    "tokenization.source.corpus_all": "全部随附语料文件",
    "tokenization.source.textbook": "教科书示例",
    "tokenization.source.paste": "粘贴的文本",
    "tokenization.source.upload": "上传的 .txt 文件",
    "tokenization.source.help": (
        "en_zh.txt：若干英文段落，每段后面跟着它的中文版本（13 KB）。全部文件还包括 2,600 个中文短语"
        "及其拼音。教科书示例：low ×5、lower ×2、newest ×6、widest ×3。"
    ),
    "tokenization.kind": "BPE 类型（动画、合并表）",
    "tokenization.kind.byte": "字节级",
    "tokenization.kind.classic": "经典",
    "tokenization.kind.help": (
        "字节级：GPT-2 的 BPE，作用在 UTF-8 字节上。经典：Sennrich 等人的 BPE，作用在字符上，"
        "每个单词以 </w> 结尾。"
    ),
    "tokenization.kind_name.byte": "字节级 BPE（GPT-2）",
    "tokenization.kind_name.classic": "经典 BPE（</w>）",
    "tokenization.labels": "方框里显示",
    "tokenization.labels.text": "文本",
    "tokenization.labels.spelling": "拼写",
    "tokenization.labels.help": (
        "词元代表的文本（一个字符的一部分显示为它的字节，例如 ⟨e4 b8⟩），或者词元在 GPT-2 词表中的"
        "写法（空格写作 Ġ，中 写作 ä¸Ń）。经典 BPE 的词元总是按原样显示。"
    ),
    "tokenization.merges": "要学习的合并次数",
    "tokenization.merges.help": "每次合并给词表增加一个词元。如果已经没有可合并的片段对，训练会提前结束。",
    "tokenization.paste": "训练文本（可以粘贴任何内容：English、中文、代码……）",
    "tokenization.paste.empty": "粘贴的文本为空：请在上方粘贴一些文字。在此之前先使用教科书示例。",
    "tokenization.upload": "一个纯文本文件（.txt，UTF-8，最大 {mb} MB）",
    "tokenization.upload.fallback": "在此之前先使用随附的语料。",
    "tokenization.upload.none": "还没有上传文件。",
    "tokenization.upload.none_limit": (
        "还没有上传文件。超过 {mb} MB 的文件到不了服务器：浏览器会直接拒收（上传框下方的红色提示就是这个意思）。"
        "请上传一个更短的 .txt 文件，或粘贴其中一段。"
    ),
    "tokenization.limit": (
        "**训练已被限制**，好让它在这台共享服务器上几秒内完成：BPE 训练的工作量随合并次数 × 每个词的长度增长，"
        "而没有空格的文本就是一个很长的词。改动如下："
    ),
    "tokenization.limit.cut": (
        "- {kind}：长于 {n} {unit}的词被切成每段最多 {n} {unit}（这段文本最长的词有 {longest} {unit}）；"
        "合并不会跨过切口。"
    ),
    "tokenization.limit.prefix": "- {kind}：只从全部 {total} 个字符中的前 {used} 个学习。",
    "tokenization.limit.unit.byte": "字节",
    "tokenization.limit.unit.classic": "个字符",
    "tokenization.upload.too_big": "这个文件有 {size} MB；这里的训练最多只接受 {limit} MB。请上传一个更短的 .txt 文件（或粘贴其中一段）。",
    "tokenization.upload.binary": "这个文件不是 UTF-8 文本（看起来是二进制文件）：请上传以 UTF-8 保存的纯 .txt 文件。",
    "tokenization.upload.not_utf8": "这个文件不是 UTF-8 文本：请上传以 UTF-8 保存的纯 .txt 文件。",
    "tokenization.upload.nul": "这个文件含有 NUL 字符：它不是纯文本。",
    "tokenization.upload.empty": "这个文件是空的（或只有空白字符）：没有可以学习的内容。",
    "tokenization.vocab.byte": (
        "训练文本：{chars} 个字符（{kb} KB）· 学到 {n} 次合并 · 词表共 {vocab} 个词元 = "
        "5 个特殊词元 + 256 个字节 + {n} 个合并出的词元。"
    ),
    "tokenization.vocab.classic": (
        "训练文本：{chars} 个字符（{kb} KB）· 学到 {n} 次合并 · 词表共 {vocab} 个词元 = "
        "5 个特殊词元 + {base} 个字符和 </w> + {n} 个合并出的词元。"
    ),
    "tokenization.ran_out": "训练文本在 {n} 次合并后就没有可合并的片段对了（要求的是 {asked} 次）。",
    "tokenization.same_as_model": "这正是其他页面上随机权重模型所用的词表。",
    # 合并动画
    "tokenization.film.title": "逐次合并：你的句子",
    "tokenization.empty": "句子为空：请在侧边栏输入一个句子（任何语言），即可看到它如何被切分。",
    "tokenization.film.explain": (
        "**BPE 怎样学习。** 先把训练文本写成很小的片段（字节或字符）。数一数每一对相邻片段出现的次数，"
        "例如 `t` 后面紧跟 `h`。出现最多的那一对在文本中的每一处都被粘成一个新词元（`th`）。"
        "然后重复：每重复一次就是一次**合并**，并给词表 $V$ 增加一个词元。"
        "要切分一个新句子，就按同样的顺序执行同样的合并。下面的滑块会在你的句子上逐步重放这些合并。"
    ),
    "tokenization.film.formula_byte": "每次合并选出出现最多的相邻片段对。词表由 5 个特殊词元、256 个字节值，以及每次合并产生的一个词元（共 k 次合并）组成。",
    "tokenization.film.formula_classic": (
        "每次合并选出出现最多的相邻片段对。词表由 5 个特殊词元、训练文本中的字符集 Σ、"
        "词尾符号 </w>，以及每次合并产生的一个词元（共 k 次合并）组成。"
    ),
    "tokenization.film.cut": "动画只显示句子的前 {n} 个字符（第 0 步最多 {boxes} 个方框）；下面的编号覆盖整个句子。",
    "tokenization.play": "播放",
    "tokenization.pause": "暂停",
    "tokenization.play.help": "每 {s} 秒跳到下一个会改变这个句子的合并。",
    "tokenization.step": "已执行的合并（步）",
    "tokenization.step.help": "第 k 步执行前 k 次合并。第 k 次合并产生的方框显示为橙色。",
    "tokenization.no_merges": "没有学到任何合并（0 次）：句子仍是最初的单个符号。",
    "tokenization.curve.explain": (
        "每次合并只会让句子变短（或保持不变）：设 $k$ 次合并后句子有 $n_k$ 个词元，$n_k$ 永远不会增加。"
        "在 {n} 次合并中，有 {changed} 次改变了这个句子；**播放**会在它们之间跳转。"
    ),
    "tokenization.curve.legend": "橙色方框：当前这次合并产生的词元。方框下面的数字：它的编号。",
    "tokenization.textbook.title": "教科书示例，一步一步来（经典 BPE）",
    "tokenization.textbook.explain": (
        "单词出现次数：{counts}。每个单词一开始都是它的字符加上词尾符号 `</w>`（`l o w </w>`）。"
        "片段对 `e s` 出现了 6 + 3 = 9 次（newest、widest）：它最先被合并；接着是 `es t`（9 次），"
        "然后是 `est </w>`（9 次），再然后是 `l o`（7 次）和 `lo w`（7 次）。次数相同时，按字母顺序"
        "较小的那一对优先。这样，像 *lowest* 这样从未出现过的新词，也能切成已知的片段："
        "`low` + `est</w>`。"
    ),
    "tokenization.merges.title": "所有合并，按学到的顺序",
    "tokenization.merges.caption": "{kind} · 第 k 步把左边 + 右边粘成新词元，新词元得到下一个空闲编号。",
    # 经典与字节级
    "tokenization.versus.title": "经典与字节级：同样的文本，同样的合并次数",
    "tokenization.versus.byte": "**字节级**：{n} 个词元，{unknown} 个未知，词表 {vocab}",
    "tokenization.versus.classic": "**经典**：{n} 个词元，{unknown} 个未知，词表 {vocab}",
    "tokenization.versus.explain": (
        "经典 BPE 在空格处切开，并在每个单词末尾加上 `</w>`；没见过的字符会变成 `[UNK]`。"
        "字节级 BPE 从 256 个字节值出发，所以任何内容都不会是未知的：一个汉字是 3 个字节，"
        "一个表情符号是 4 个字节，每个字节用一个可打印字符来*拼写*（GPT-2 的对照表；空格写作 `Ġ`）。"
        "之后的合并再把常见的字符和单词重新拼起来。中文没有空格，所以对经典 BPE 来说，"
        "一整串连续的汉字就是一个“单词”。"
    ),
    "tokenization.bytes.yours": "**你的句子中每个非 ASCII 字符背后的字节**（UTF-8 每个字符用 1 到 4 个字节）",
    "tokenization.bytes.example": "**每个非 ASCII 字符背后的字节**（你的句子里没有这样的字符：这是一个示例；UTF-8 每个字符用 1 到 4 个字节）",
    # 编号与特殊词元
    "tokenization.ids.title": "词元编号与特殊词元",
    "tokenization.ids.explain": (
        "模型从来看不到文字，只看到编号：每个词元在词表中的位置。随后嵌入层（下一页）会在它的表 $E$ "
        "中取出第 $x_i$ 行。在 Glassbox 的每个词表里，五个**特殊词元**占据最前面的编号。它们从不被切开，"
        "也从不从文本中学习：`[PAD]` 在一批数据中填充较短的句子，`[UNK]` 代表未知字符，"
        "`[BOS]`/`[EOS]` 标记序列的开始和结束（解码器从 `[BOS]` 开始），`[MASK]` 用来遮住一个词元"
        "（BERT 式训练）。"
    ),
    "tokenization.ids.figure": "[BOS] + 句子 + [EOS]，{kind}",
    "tokenization.ids.encode": "encode(...)：{n} 个编号",
    "tokenization.ids.plain": "同样的“[BOS]”当作普通文本读（allow_special=False）：{n} 个词元，而不是一个",
    "tokenization.ids.roundtrip_yes": "decode(encode(text)) 能否原样还原文本：能",
    "tokenization.ids.roundtrip_no": "decode(encode(text)) 能否原样还原文本：不能",
    "tokenization.ids.empty": "在侧边栏输入一个句子，即可看到它夹在 [BOS] 与 [EOS] 之间的编码。",
    # 模型自己的分词器
    "tokenization.model.title": "其他页面上的模型读到的内容",
    "tokenization.model.trained": "训练好的 汉字→拼音 词表中的字符",
    "tokenization.model.trained_task": "{task!r} 任务词表中的字符",
    "tokenization.model.random": "字节级 BPE，用它自己在随附语料上学到的合并",
    "tokenization.model.caption": "模型的源语言分词器：{what}。共 {n} 个词元。",
    "tokenization.model.folder_title": "{name} 读到的内容：它自己的分词器",
    "tokenization.model.folder": "模型文件夹自带的分词器（{kind}）",
    "tokenization.model.folder_note": (
        "这些是模型实际读到的词元和编号，由它自己的分词器给出（包括分词器添加的特殊词元）。"
        "下面各节从一段训练文本学习 BPE，展示这样的词表是怎样得来的。"
    ),
    "tokenization.model.figure": "模型输入的词元与编号",
    # WordPiece 与 BPE 对照
    "tokenization.wp.title.model": "all-MiniLM-L6-v2 读到的内容：WordPiece，与我们的字节级 BPE 并排",
    "tokenization.wp.title.compare": "对照：同一个句子的 WordPiece（BERT，all-MiniLM-L6-v2）切分",
    "tokenization.wp.intro": (
        "**WordPiece** 是 BERT 和 all-MiniLM-L6-v2 的分词器：一个固定的词表，含 30,522 个片段，"
        "包括英文单词的片段（小写）、标点，以及其他文字中的一部分字符。论文本身两种都用过："
        "英德翻译用字节对编码（约 37,000 个词元），英法翻译用 32,000 个 word-piece 的词表。"
        "下面是侧边栏中的句子在两种分词器下的结果：左边是 WordPiece，右边是我们的字节级 BPE"
        "（随机权重模型的 1,000 次合并）。"
    ),
    "tokenization.wp.empty": "句子为空：请在侧边栏输入一个句子，以比较这两种分词器。",
    "tokenization.wp.name.bpe": "字节级 BPE（我们的）",
    "tokenization.wp.name.wordpiece": "WordPiece（all-MiniLM-L6-v2）",
    "tokenization.wp.left": "**WordPiece**：{n} 个词元，含 [CLS] 和 [SEP]",
    "tokenization.wp.right": "**字节级 BPE**（{merges} 次合并）：{n} 个词元",
    "tokenization.wp.tokens": "这 {n} 个词元：",
    "tokenization.wp.ids": "它们的 {n} 个编号：",
    "tokenization.wp.how": (
        "**WordPiece 怎样切一个词。** 先清理文本：转成小写，去掉重音符号（é → e），每个标点和每个汉字"
        "都单独成为一个词。然后从左边开始切每个词，每次取词表 $V$ 中能找到的**最长**片段"
        "（贪心的最长匹配优先）。不在词首的片段前面加上 `##`（`token` + `##izing`）。"
        "如果在某个位置连一个字符都匹配不上，整个词就变成 `[UNK]`（未知）。"
    ),
    "tokenization.wp.input": "模型的输入总是以 `[CLS]`（classification，“分类”：一个汇总全句的位置）开头，以 `[SEP]`（separator，“分隔符”）结尾：",
    "tokenization.wp.differs": (
        "**它和 BPE 有什么不同。** BPE 是*自下而上*地拼：从字节出发，按学到的顺序重放合并。"
        "WordPiece 是*自上而下*地切：直接查它认识的最长片段，根本没有合并表。字节级 BPE 能用字节拼出"
        "任何内容，所以从不出现未知词元；WordPiece 对词表之外的字符（很多汉字、大多数表情符号）"
        "只能给出 `[UNK]`。BPE 保留大小写和空格（一个词元可以是 `␣is`）；WordPiece 转成小写并丢掉空格，"
        "改用 `##` 标出接在词中间的片段。编号的含义也不一样：在 WordPiece 中编号 101 是 `[CLS]`，"
        "在我们的 BPE 中却只是一个普通字节，所以模型只能读懂训练它时所用分词器的编号。"
    ),
    "tokenization.wp.words.title": "**逐词查看**：清理后的每个词，以及 WordPiece 把它切成的片段",
    "tokenization.wp.word": "跟着贪心搜索看一个词",
    "tokenization.wp.greedy": "{word} 的每一次尝试，最长的候选在前：✓ 是被选中的片段，✗ 是不在词表中的候选。结果：{pieces}。",
    # 图
    "tokenization.fig.hover.token": "词元 {i}：{token}",
    "tokenization.fig.hover.reads": "读作：{text}",
    "tokenization.fig.hover.id": "编号：{id}",
    "tokenization.fig.first_n": "（{total} 个词元中的前 {n} 个）",
    "tokenization.fig.step0": "第 0 步（共 {total} 步）：最初的{start}，{n} 个词元",
    "tokenization.fig.step0.bytes": "字节（GPT-2 写法）",
    "tokenization.fig.step0.chars": "字符 + {eow}",
    "tokenization.fig.step": "第 {step} 步（共 {total} 步）：{a} + {b} → {new}{reads}{what} · {n} 个词元",
    "tokenization.fig.not_here": "（不在这个句子里）",
    "tokenization.fig.count.x": "已执行的合并次数",
    "tokenization.fig.count.y": "词元数",
    "tokenization.fig.count.hover": "{x} 次合并后：{y} 个词元",
    "tokenization.fig.count.now": "第 {x} 步：{y} 个词元",
    # 表头
    "tokenization.col.step": "步",
    "tokenization.col.left": "左",
    "tokenization.col.right": "右",
    "tokenization.col.new_token": "新词元",
    "tokenization.col.id": "编号",
    "tokenization.col.reads_as": "读作",
    "tokenization.col.character": "字符",
    "tokenization.col.code_point": "码位",
    "tokenization.col.utf8": "UTF-8 字节（十六进制）",
    "tokenization.col.gpt2": "GPT-2 写法",
    "tokenization.col.byte_tokens": "字节词元数",
    "tokenization.col.token": "词元",
    "tokenization.col.tokenizer": "分词器",
    "tokenization.col.tokens": "词元数",
    "tokenization.col.unknown": "未知（[UNK]）",
    "tokenization.col.vocabulary": "词表大小",
    "tokenization.col.word": "词（清理后）",
    "tokenization.col.pieces": "WordPiece 片段",
    "tokenization.col.ids": "编号",
    "tokenization.col.try": "第几次尝试",
    "tokenization.col.candidate": "候选",
    "tokenization.col.in_vocab": "在词表中？",
    # 在这里训练的语言模型（任务 "lm"）：它在自己的训练文本上学到的字节级 BPE
    "tokenization.model.lm": "字节级 BPE，{merges} 次合并，在它自己的训练文本上学到",
    "tokenization.model.lm_note": (
        "这些是模型读写的词元和编号：在它的训练文本上学到的字节级 BPE。算法与下面各节相同，"
        "下面各节从你选择的训练文本学习一个。"
    ),
}
