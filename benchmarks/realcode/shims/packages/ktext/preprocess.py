"""ktext's processor as github_issue_summarization uses it: fit_transform(texts) -> padded word ids, id2token."""
import collections

import numpy as np


class processor:  # noqa: N801 (ktext's name)
    def __init__(self, keep_n=150000, padding="pre", padding_maxlen=None, truncating="post",
                 append_indicators=False, hueristic_pct_padding=0.9):
        self.keep_n, self.padding, self.padding_maxlen = keep_n, padding, padding_maxlen
        self.truncating, self.append_indicators = truncating, append_indicators

    def _tokens(self, text):
        words = str(text).lower().split()
        return ["_start_", *words, "_end_"] if self.append_indicators else words

    def fit_transform(self, texts):
        documents = [self._tokens(text) for text in texts]
        counts = collections.Counter(word for document in documents for word in document)
        kept = [word for word, _ in counts.most_common(self.keep_n)]
        self.token2id = {word: index + 2 for index, word in enumerate(kept)}
        self.id2token = {0: "_pad_", 1: "_unk_", **{index: word for word, index in self.token2id.items()}}
        if self.padding_maxlen is None:
            self.padding_maxlen = max(len(document) for document in documents)
        return self.transform_parallel_tokens(documents)

    def transform(self, texts):
        return self.transform_parallel_tokens([self._tokens(text) for text in texts])

    def transform_parallel_tokens(self, documents):
        rows = np.zeros((len(documents), self.padding_maxlen), dtype=np.int64)
        for row, document in zip(rows, documents):
            ids = [self.token2id.get(word, 1) for word in document]
            ids = ids[:self.padding_maxlen] if self.truncating == "post" else ids[-self.padding_maxlen:]
            if self.padding == "pre":
                row[len(row) - len(ids):] = ids
            else:
                row[:len(ids)] = ids
        return rows
