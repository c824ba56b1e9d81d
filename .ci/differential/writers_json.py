"""Writers of JSON and JSON Lines: jq."""

import json
import os

from cases import Forward, run_tool, set_path

# ---------------------------------------------------------------------------------------------
# jq: JSON pretty and compact, ASCII, and JSON Lines

class JQ(Forward):
    """jq re-serializes the JSON Python's json module wrote (ensure_ascii, so every non-ASCII character
    reaches jq as a \\u escape, non-BMP ones as surrogate pairs). Many files go through one jq
    process (its start-up costs 14 ms); each output is cut out of jq's stream at the file names the
    program prints before each input's output."""

    tools = ("jq",)

    def __init__(self, name, flags, program, ext):
        self.name, self.flags, self.program, self.ext = name, list(flags), program, ext

    def _source(self, trips):
        return json.dumps({"schemaVersion": "3.0.0", "trips": trips})

    def write(self, items, directory):
        src = os.path.join(directory, "jq-src-%d" % items[0][0]) if items else directory
        os.makedirs(src, exist_ok=True)
        for start in range(0, len(items), 400):
            batch = items[start:start + 400]
            names = []
            for k, trips in batch:
                p = os.path.join(src, "%05d.json" % k)
                with open(p, "w") as f:
                    f.write(self._source(trips))
                names.append(p)
            out = run_tool(["jq"] + self.flags + ["(input_filename | \"\\u0001\" + .), (%s)" % self.program]
                           + names)
            self._split(out, directory)
        for name in os.listdir(src):
            os.remove(os.path.join(src, name))
        os.rmdir(src)

    def _split(self, out, directory):
        # Each file's output follows a line holding its name as a JSON string starting with \u0001; jq
        # writes that string as "\u0001..." whatever the flags, and no line of a trip starts so.
        current, chunk = None, []
        for line in out.split(b"\n"):
            if line.startswith(b'"\\u0001'):
                if current:
                    self._put(current, chunk, directory)
                k = int(os.path.basename(json.loads(line)[1:]).split(".")[0])
                current, chunk = set_path(directory, k, self.ext), []
            else:
                chunk.append(line)
        if current:
            self._put(current, chunk, directory)

    def _put(self, path, lines, directory):
        while lines and lines[-1] == b"":
            lines.pop()
        with open(path, "wb") as f:
            f.write(b"\n".join(lines) + (b"\n" if lines else b""))

    def write_one(self, trips, path, k):
        out = run_tool(["jq"] + self.flags + [self.program], stdin=self._source(trips).encode())
        with open(path, "wb") as f:
            f.write(out)
