"""The PostgreSQL benchmark's server side: a throwaway cluster (`.ci/postgres`) or the one TRIPCONV_TEST_PG
names, databases made and dropped per run, psql, and measuring a process (wall time, peak RSS, its CPU
and the server's CPU over the same span, when the server runs here and its directory is known)."""
import atexit, os, re, signal, subprocess, sys, time
from urllib.parse import quote, urlsplit, urlunsplit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
GNU_TIME = "/usr/bin/time"


class Server:
    """Where the benchmark's databases live. `start()` makes a throwaway cluster unless TRIPCONV_TEST_PG is set."""

    def __init__(self):
        self.base = None
        self.own = False
        self.made = []

    def start(self):
        if os.environ.get("TRIPCONV_TEST_PG"):
            self.base = os.environ["TRIPCONV_TEST_PG"]
        else:
            out = subprocess.run([os.path.join(ROOT, ".ci", "postgres"), "start"], check=True, capture_output=True, text=True).stdout
            for name, value in re.findall(r"^export (\w+)='([^']*)'$", out, re.M):
                os.environ[name] = value
            self.base, self.own = os.environ["TRIPCONV_TEST_PG"], True
            atexit.register(self.stop)
            for sig in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, lambda *_: sys.exit(143))
        atexit.register(self.drop_all)
        return self

    def stop(self):
        if self.own:
            subprocess.run([os.path.join(ROOT, ".ci", "postgres"), "stop"], check=False)
            self.own = False

    def describe(self):
        v = self.psql("postgres", "SHOW server_version").strip()
        where = "a throwaway cluster (.ci/postgres start, fsync off), stopped at the end" if self.own else "TRIPCONV_TEST_PG"
        return "PostgreSQL %s, %s, on this machine's Unix socket" % (v, where) if "host=/" in self.base else \
            "PostgreSQL %s, %s" % (v, where)

    # ---------------------------------------------------------------- addresses

    def address(self, db):
        """The libpq address of database `db` on this server (a URI keeps its form)."""
        if re.match(r"postgres(ql)?://", self.base):
            u = urlsplit(self.base)
            return urlunsplit((u.scheme, u.netloc, "/" + db, u.query, u.fragment))
        return self.base + " dbname=" + db

    def pgloader_uri(self, db):
        """pgloader's form of the same address: postgresql://user[:password]@host:port/db, `unix:DIR` for a socket."""
        info = self.psql(db, r"\echo :HOST :PORT :USER").split()
        host, port, user = info[0], info[1], info[2]
        password = self.parameter("password") or os.environ.get("PGPASSWORD")
        netloc = ("unix:" + host if host.startswith("/") else host) + ":" + port
        auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
        return "postgresql://%s@%s/%s" % (auth, netloc, db)

    def parameter(self, key):
        if re.match(r"postgres(ql)?://", self.base):
            u = urlsplit(self.base)
            return u.password if key == "password" else None
        m = re.search(r"\b%s\s*=\s*('(?:[^'\\]|\\.)*'|\S+)" % key, self.base)
        return m.group(1).strip("'") if m else None

    # ---------------------------------------------------------------- databases and psql

    def psql(self, db, *commands, check=True):
        cmd = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.address(db)]
        for c in commands:
            cmd += ["-c", c]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if check and p.returncode != 0:
            sys.exit("psql failed on %s: %s\n%s" % (db, " ".join(commands)[:300], p.stderr.strip()))
        return p.stdout

    def create(self, db, template=None):
        self.drop(db)
        self.psql("postgres", 'CREATE DATABASE "%s"%s' % (db, ' TEMPLATE "%s"' % template if template else ""))
        self.made.append(db)

    def drop(self, db):
        self.psql("postgres", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % db)
        if db in self.made:
            self.made.remove(db)

    def drop_all(self):
        for db in list(reversed(self.made)):
            subprocess.run(["psql", "-X", "-q", "-d", self.address("postgres"), "-c", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % db],
                           capture_output=True)
        self.made = []

    def checkpoint(self):
        """A checkpoint before a timed run, so no run pays for the previous one's dirty pages (needs the right; else skipped)."""
        self.psql("postgres", "CHECKPOINT", check=False)

    # ---------------------------------------------------------------- the server's CPU

    def cpu_seconds(self):
        """CPU seconds the server has used so far: the postmaster with its reaped children (backends that
        ended), plus its live children. None when the server is not ours to see."""
        d = os.environ.get("TRIPCONV_PG_DIR")
        try:
            with open(os.path.join(d, "data", "postmaster.pid")) as f:
                pid = int(f.readline())
        except (TypeError, OSError, ValueError):
            return None
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields[1] is the ppid; [11..14] utime, stime, cutime, cstime (stat's fields 14-17)
            if int(entry) == pid or int(fields[1]) == pid:
                total += sum(int(x) for x in fields[11:15])
        return total / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- measuring

def shown(cmd):
    """A command as a person would type it: an address as "$ADDRESS", SQL in double quotes where it holds single ones."""
    out = []
    for arg in cmd:
        if re.match(r"(host=|postgres(ql)?://)", arg):
            out.append('"$ADDRESS"')
        elif re.fullmatch(r"[\w@%+=:,./-]+", arg):
            out.append(arg)
        elif "'" not in arg:
            out.append("'" + arg + "'")
        else:
            out.append('"' + re.sub(r'(["$`]|\\(?=["$`\\]|$))', r"\\\1", arg) + '"')
    return " ".join(out)


class Run:
    def __init__(self, cmd, status, seconds, rss_mib, cpu, server_cpu, stderr):
        self.cmd, self.status, self.seconds, self.rss_mib, self.cpu = cmd, status, seconds, rss_mib, cpu
        self.server_cpu, self.stderr = server_cpu, stderr

    def failed(self):
        return self.status != 0

    def failure(self):
        """What went wrong, in a line: the exit status and the last line of stderr (of each process that failed)."""
        each = getattr(self, "each", None) or [(self.status, 0, 0, self.stderr)]
        return "; ".join(("[%d] " % k if len(each) > 1 else "") + "exit %d: %s" % (e[0], (e[3].strip().splitlines() or [""])[-1][:200])
                         for k, e in enumerate(each) if e[0] != 0)


def spawn(cmd, cwd, stdout_path, tag):
    """Starts cmd under GNU time (peak RSS, user and system CPU into a file); returns (process, files)."""
    stats = os.path.join(cwd, ".time-%s" % tag)
    err = open(os.path.join(cwd, ".stderr-%s" % tag), "wb")
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    p = subprocess.Popen([GNU_TIME, "-f", "%M %U %S", "-o", stats, *cmd], cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    return p, (stats, err, out)


def collect(p, files):
    """Waits for a process spawn() started: (status, peak RSS MiB, CPU seconds, stderr text)."""
    status = p.wait()
    stats, err, out = files
    err.close()
    if out is not subprocess.DEVNULL:
        out.close()
    with open(err.name, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    with open(stats) as f:
        words = f.read().split()
    os.remove(stats)
    os.remove(err.name)
    try:
        rss, cpu = int(words[-3]) / 1024, float(words[-2]) + float(words[-1])
    except (IndexError, ValueError):
        rss = cpu = float("nan")
    return status, rss, cpu, text


def measure(server, cmd, cwd, stdout_path=None):
    """One process, timed: wall seconds around it, its peak RSS and CPU, the server's CPU over the span."""
    s0 = server.cpu_seconds()
    t0 = time.perf_counter()
    p, files = spawn(cmd, cwd, stdout_path, "1")
    status, rss, cpu, text = collect(p, files)
    seconds = time.perf_counter() - t0
    s1 = server.cpu_seconds()
    return Run(shown(cmd) + (" > " + os.path.basename(stdout_path) if stdout_path else ""), status, seconds, rss, cpu, None if s0 is None else s1 - s0, text)


def measure_together(server, cmds, cwd):
    """Several processes started at once; wall time from the first start to the last end, the largest peak
    RSS, the CPU of all of them, the server's CPU; status 0 only when every one exited 0."""
    s0 = server.cpu_seconds()
    t0 = time.perf_counter()
    started = [spawn(c, cwd, None, str(k)) for k, c in enumerate(cmds)]
    results = [collect(p, files) for p, files in started]
    seconds = time.perf_counter() - t0
    s1 = server.cpu_seconds()
    status = next((r[0] for r in results if r[0] != 0), 0)
    run = Run(" &\n".join(shown(c) for c in cmds) + " &\nwait", status, seconds, max(r[1] for r in results),
              sum(r[2] for r in results), None if s0 is None else s1 - s0,
              "".join("[%d] %s" % (k, r[3]) for k, r in enumerate(results)))
    run.each = results
    return run


def background_busy(seconds=1.0):
    """The share of the machine's CPU busy over `seconds` while the benchmark runs nothing: other work."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(1, t1 - t0)
