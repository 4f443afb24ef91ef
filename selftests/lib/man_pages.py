# SPDX-License-Identifier: GPL-2.0
"""The man pages against the sources they describe (selftests/host/man_pages.sh).

tandemctl(8) against `tandemctl --help` (every command a .SS "OBJECT VERB",
every option its usage lists an item), against ctl/cmd/*.c (every option of
a command file's option tables documented for one of its commands), and
against tandemctl itself (every option the page documents is accepted by
the command, taking a value exactly when the page says it does).
tandem(4) against the MODULE_PARM_DESC lines of kmod/*.c, the sysfs ABI
(Documentation/ABI/testing/sysfs-kernel-tandem, kmod/sysfs.c), the netlink
spec (Documentation/netlink/tandem.yaml) and kmod/uapi/linux/tandem.h.
Both render without a groff warning and have a NAME line lexgrog reads.

Usage: man_pages.py TOP TANDEMCTL
"""
import os
import re
import subprocess
import sys

import yaml

TOP, TANDEMCTL = sys.argv[1], sys.argv[2]
MAN8 = os.path.join(TOP, "Documentation/man/tandemctl.8")
MAN4 = os.path.join(TOP, "Documentation/man/tandem.4")
MAN8A = os.path.join(TOP, "Documentation/man/tandem-agent.8")
AGENT = os.path.join(os.path.dirname(TANDEMCTL), "tandem-agent")
results = []


def check(name, problems):
    """One TAP result: passes when problems (a list of strings) is empty."""
    results.append((name, list(problems)))


def read(rel):
    with open(os.path.join(TOP, rel), encoding="utf-8") as f:
        return f.read()


# ---- roff ----

ESCAPES = [("\\-", "-"), ("\\(lq", '"'), ("\\(rq", '"'), ("\\(*d", "d"), ("\\(mu", "x"),
           ("\\e", "\\"), ("\\%", ""), ("\\c", ""), ("\\&", "")]


def unroff(s):
    s = re.sub(r"\\f[BIRP]|\\f\(..", "", s)
    for a, b in ESCAPES:
        s = s.replace(a, b)
    return s


def macro_args(line):
    """'.BI \\-\\-node " N"' -> ('BI', '--node N'): the text a macro line prints"""
    m = re.match(r"\.(\w+)\s*(.*)", line)
    if not m:
        return None, unroff(line)
    args = re.findall(r'"([^"]*)"|(\S+)', m.group(2))
    return m.group(1), unroff("".join(a or b for a, b in args))


def parse_man(path):
    """Items (.TP and its head line) with their section, subsection, nesting and text."""
    items, sh, ss, depth, parent, cur = [], None, None, 0, None, None
    lines = open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(".\\\""):
            continue
        if line.startswith((".SH", ".SS", ".RS", ".RE", ".PP", ".TP")):
            cur = None
        if line.startswith(".SH"):
            sh, ss = macro_args(line)[1].strip(), None
        elif line.startswith(".SS"):
            ss = macro_args(line)[1].strip()
        elif line.startswith(".RS"):
            depth += 1
        elif line.startswith(".RE"):
            depth -= 1
        elif line.startswith(".TP") and i < len(lines):
            mac, head = macro_args(lines[i])
            i += 1
            cur = {"sh": sh, "ss": ss, "depth": depth, "macro": mac, "head": head.strip(),
                   "body": "", "parent": parent if depth else None}
            items.append(cur)
            if depth == 0:
                parent = cur
        elif cur is not None:
            cur["body"] += " " + macro_args(line)[1]
    return items, lines


def first_word(s):
    return s.split()[0] if s.split() else ""


OPT_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def rendered(path):
    """the page as man prints it, without formatting, whitespace runs made one space"""
    env = dict(os.environ, MANWIDTH="80")
    env.pop("MAN_KEEP_FORMATTING", None)
    m = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True, env=env)
    return m, " ".join(re.sub(r".\x08", "", m.stdout).split())


def render(path):
    """groff -ww and man --warnings: no output on stderr; lexgrog: a NAME line"""
    probs = []
    g = subprocess.run(["groff", "-man", "-ww", "-z", path], capture_output=True, text=True)
    if g.returncode or g.stderr:
        probs.append("groff -man -ww: " + (g.stderr.strip() or "exit %d" % g.returncode))
    m, text = rendered(path)
    if m.returncode or m.stderr or not text.startswith(os.path.basename(path).split(".")[0].upper()):
        probs.append("man -l: exit %d: %s" % (m.returncode, m.stderr.strip()[:300]))
    lx = subprocess.run(["lexgrog", path], capture_output=True, text=True)
    base = os.path.basename(path).rsplit(".", 1)[0]
    if lx.returncode or '"%s - ' % base not in lx.stdout:
        probs.append("lexgrog: %s" % (lx.stdout + lx.stderr).strip())
    return probs


def version():
    return re.search(r'#define TANDEM_VERSION\s+"([^"]+)"', read("kmod/tandem.h")).group(1)


def th_version(lines):
    th = [ln for ln in lines if ln.startswith(".TH")]
    m = re.search(r'"Tandem ([^"]+)"', th[0]) if th else None
    return m.group(1) if m else None


# ---- tandemctl(8) ----

def help_commands():
    out = subprocess.run([TANDEMCTL, "--help"], capture_output=True, text=True, check=True).stdout
    cmds, globs = {}, []
    for ln in out.splitlines():
        m = re.match(r"  tandemctl ([a-z]+)(?: ([a-z][a-z]*)(?= |$))?(?: (.*))?$", ln)
        if m:
            cmds[m.group(1) + (" " + m.group(2) if m.group(2) else "")] = m.group(3) or ""
        m = re.match(r"  (-\w), (--[\w-]+)\s", ln)
        if m:
            globs += [m.group(1), m.group(2)]
    return cmds, globs


def cmd_files():
    """{file: ([(object, verb)], long options {name: short char or None})}"""
    res = {}
    cmddir = os.path.join(TOP, "ctl/cmd")
    for fn in sorted(os.listdir(cmddir)):
        if not fn.endswith(".c"):
            continue
        src = read("ctl/cmd/" + fn)
        cmds = [(o + (" " + v if v != "NULL" else "")).replace('"', "")
                for o, v in re.findall(r'TANDEM_CMD\(\s*\w+,\s*"(\w+)",\s*("?\w+"?)', src)]
        shorts = "".join(re.findall(r'ctl_getopt\([^,]+,[^,]+,\s*"([^"]*)"', src))
        opts = {}
        for name, val in re.findall(r'\{\s*"([a-z][\w-]*)",\s*\w+_argument,\s*NULL,\s*([^}]+?)\s*\}', src):
            c = re.fullmatch(r"'(\w)'", val)
            opts["--" + name] = "-" + c.group(1) if c and c.group(1) in shorts else None
        for name in re.findall(r'strcmp\(o, "(--[a-z][\w-]*)"\)', src):
            opts.setdefault(name, None)
        res[fn] = (cmds, opts)
    return res


def run_option(cmd, opt, value):
    """tandemctl CMD OPT [1] --zz-no-such-option -- true: what it says about OPT"""
    argv = [TANDEMCTL] + cmd.split() + [opt] + (["1"] if value else []) + \
        ["--zz-no-such-option", "--", "true"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
                       env=dict(os.environ, TANDEM_TRACKER_DIR="/nonexistent/tandem-man-test"))
    if p.returncode != 2:
        return "exit %d (want 2, a usage error): %s" % (p.returncode, p.stderr.strip()[:200])
    if "unknown option '%s'" % opt in p.stderr:
        return "refused as unknown"
    if not value and "unknown option '--zz-no-such-option'" not in p.stderr:
        return "documented without a value, but it took the next argument as its value"
    return None


def check_tandemctl():
    items, lines = parse_man(MAN8)
    check("tandemctl.8: renders without warnings (groff -ww, man -l), lexgrog reads NAME",
          render(MAN8))
    want = version()
    got = subprocess.run([TANDEMCTL, "--version"], capture_output=True, text=True).stdout.split()
    check("tandemctl.8: .TH version is kmod/tandem.h's and tandemctl --version's (%s)" % want,
          [p for p in ["page says %s" % th_version(lines)] if th_version(lines) != want] +
          [p for p in ["tandemctl --version says %s" % got] if got[-1:] != [want]])

    cmds, globs = help_commands()
    subs = [ln[4:].strip('"') for ln in lines if ln.startswith(".SS")]
    check("tandemctl.8: one .SS per command of tandemctl --help (%d), no other" % len(cmds),
          ["missing: " + c for c in cmds if c not in subs] +
          ["not a command: " + s for s in subs if s not in cmds] +
          ["twice: " + s for s in set(subs) if subs.count(s) > 1])

    doc = {}	# command -> {option: takes a value}
    for it in items:
        if it["sh"] == "COMMANDS" and it["depth"] == 0:
            d = doc.setdefault(it["ss"], {})
            for o in OPT_RE.findall(it["head"]):
                d[o] = it["macro"] == "BI"
    probs = []
    for c, usage in cmds.items():
        for o in OPT_RE.findall(usage):
            if o not in doc.get(c, {}):
                probs.append("%s: %s" % (c, o))
    knobs = re.findall(r"\[([a-z_]+) ", cmds.get("config set", ""))
    have = [first_word(it["head"]) for it in items if it["ss"] == "config set"]
    probs += ["config set: knob %s" % k for k in knobs if k not in have]
    check("tandemctl.8: every option (and config knob) a command's usage lists is an item "
          "of its section", probs)

    probs = []
    for fn, (fcmds, opts) in cmd_files().items():
        usage = " ".join(cmds.get(c, "") for c in fcmds)
        documented = set().union(*[doc.get(c, {}).keys() for c in fcmds] or [set()])
        for o, short in opts.items():
            if o not in documented:
                probs.append("ctl/cmd/%s: %s not documented for any of %s" % (fn, o, fcmds))
            if o not in OPT_RE.findall(usage) and (not short or short not in OPT_RE.findall(usage)):
                probs.append("ctl/cmd/%s: %s missing from the usage of %s" % (fn, o, fcmds))
    check("every option in ctl/cmd/*.c's option tables is in its command's --help usage "
          "and its man section", probs)

    for c in cmds:
        probs = ["%s: %s" % (o, why) for o, val in sorted(doc.get(c, {}).items())
                 if c != "config set" for why in [run_option(c, o, val)] if why]
        check("tandemctl %s: accepts the %d options its man section documents, taking a value "
              "where the page says so" % (c, len(doc.get(c, {})) if c != "config set" else 0),
              probs)

    opts = {o for it in items if it["sh"] == "OPTIONS" for o in OPT_RE.findall(it["head"])}
    codes = {first_word(it["head"]) for it in items if it["sh"] == "EXIT STATUS"}
    envs = set(re.findall(r'getenv\("(TANDEM_\w+)"\)', subprocess.run(
        ["grep", "-rh", "getenv", os.path.join(TOP, "ctl")], capture_output=True, text=True).stdout))
    envdoc = {first_word(it["head"]) for it in items if it["sh"] == "ENVIRONMENT"}
    check("tandemctl.8: global options of --help, exit statuses 0 1 2, TANDEM_* variables "
          "ctl/ reads",
          ["option " + o for o in globs if o not in opts] +
          ["exit status " + c for c in "012" if c not in codes] +
          ["variable " + e for e in sorted(envs - envdoc)])


# ---- tandem-agent(8) ----

# a valid value where 1 is not one (the agent checks values as it parses them)
AGENT_VALUES = {"--min-gain": "0.5", "--tracker-pages": "4096"}


def run_agent_option(opt, value):
    """tandem-agent OPT [VALUE] --zz-no-such-option: getopt must reach the unknown one"""
    argv = [AGENT, opt] + ([AGENT_VALUES.get(opt, "1")] if value else []) + \
        ["--zz-no-such-option"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    if p.returncode != 1:
        return "exit %d (want 1, a bad option): %s" % (p.returncode, p.stderr.strip()[:200])
    if "option '%s'" % opt in p.stderr:
        return "refused: " + p.stderr.strip().splitlines()[0]
    if "unrecognized option '--zz-no-such-option'" not in p.stderr:
        return "did not reach the next option: " + p.stderr.strip()[:200]
    return None


def check_agent():
    items, lines = parse_man(MAN8A)
    check("tandem-agent.8: renders without warnings (groff -ww, man -l), lexgrog reads NAME",
          render(MAN8A))
    check("tandem-agent.8: .TH version is kmod/tandem.h's (%s)" % version(),
          [] if th_version(lines) == version() else ["page says %s" % th_version(lines)])
    doc = {o: it["macro"] == "BI" for it in items if it["sh"] == "OPTIONS"
           for o in OPT_RE.findall(it["head"])}
    if not os.access(AGENT, os.X_OK):
        check("tandem-agent: --help, its options and the unit's against the page",
              ["%s is not built" % AGENT])
        return
    h = subprocess.run([AGENT, "--help"], capture_output=True, text=True)
    listed = set(OPT_RE.findall(h.stdout))
    unit = read("agent/tandem-agent.service")
    execstart = re.search(r"^ExecStart=(.*)$", unit, re.M).group(1)
    check("tandem-agent.8: every option of tandem-agent --help (%d) and of the unit's ExecStart "
          "is documented" % len(listed),
          ["--help exit %d" % h.returncode for _ in [0] if h.returncode] +
          ["--help lists %s" % o for o in sorted(listed) if o not in doc] +
          ["ExecStart uses %s" % o for o in OPT_RE.findall(execstart) if o not in doc])
    check("tandem-agent: accepts the %d options its man page documents, taking a value where "
          "the page says so" % len(doc),
          ["%s: %s" % (o, why) for o, val in sorted(doc.items()) if o not in ("-h", "--help")
           for why in [run_agent_option(o, val)] if why])


# ---- tandem(4) ----

def module_params():
    """{name: default} from module_param*() and MODULE_PARM_DESC() in kmod/*.c"""
    src = "".join(read("kmod/" + f) for f in sorted(os.listdir(os.path.join(TOP, "kmod")))
                  if f.endswith(".c") and not f.endswith(".mod.c"))
    names = re.findall(r"module_param(?:_named|_cb)?\(\s*(\w+)", src)
    params = {}
    for n in names:
        m = re.search(r"MODULE_PARM_DESC\(\s*%s\s*,((?:\s*\"(?:[^\"\\]|\\.)*\")+)\s*\)" % n, src)
        desc = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))) if m else ""
        d = re.search(r"default: ([^)]+)\)", desc)
        params[n] = d.group(1).strip() if d else None
    return params


def check_tandem4():
    items, lines = parse_man(MAN4)
    check("tandem.4: renders without warnings (groff -ww, man -l), lexgrog reads NAME",
          render(MAN4))
    check("tandem.4: .TH version is kmod/tandem.h's (%s)" % version(),
          [] if th_version(lines) == version() else ["page says %s" % th_version(lines)])

    params = module_params()
    doc = {first_word(it["head"]): it["body"] for it in items if it["sh"] == "PARAMETERS"}
    probs = ["no MODULE_PARM_DESC default for " + n for n, d in params.items() if d is None]
    probs += ["parameter %s not documented" % n for n in params if n not in doc]
    probs += ["%s is not a parameter" % n for n in doc if n not in params]
    probs += ["%s: page lacks 'Default: %s'" % (n, d) for n, d in params.items()
              if n in doc and d and "Default: %s." % d not in doc[n]]
    check("tandem.4: PARAMETERS are the module_param()s (%d), each with its MODULE_PARM_DESC "
          "default" % len(params), probs)

    abi = read("Documentation/ABI/testing/sysfs-kernel-tandem")
    paths = [p[len("/sys/kernel/tandem/"):] for p in re.findall(r"^What:\s+(\S+)", abi, re.M)]
    paths = [p for p in paths if p]
    top = [first_word(it["head"]) for it in items if it["sh"] == "SYSFS" and it["depth"] == 0]
    check("tandem.4: SYSFS items are the ABI file's What: paths (%d)" % len(paths),
          ["missing " + p for p in paths if p not in top] +
          ["not in the ABI file: " + p for p in top if p not in paths])

    sysfs = read("kmod/sysfs.c")
    attrs = re.findall(r"&(\w+)_attr\.attr", sysfs)
    counters = re.findall(r'\[TANDEM_CNT_\w+\]\s*=\s*"(\w+)"', sysfs)
    enum = re.search(r"enum tandem_counter \{(.*?)\}", read("kmod/uapi/linux/tandem.h"), re.S).group(1)
    order = [n.lower() for n in re.findall(r"(?<!_)TANDEM_CNT_(\w+)", enum)]
    nested = [first_word(it["head"]) for it in items if it["sh"] == "SYSFS" and it["depth"] == 1
              and it["parent"] and it["parent"]["head"].endswith("counters/")]
    check("tandem.4: every sysfs attribute of kmod/sysfs.c (%d) and counter (%d) is documented, "
          "the counters in enum tandem_counter's order" % (len(attrs), len(counters)),
          ["attribute " + a for a in attrs if not any(p.split("/")[-1] == a for p in top)] +
          ["counters in kmod/sysfs.c %s, on the page %s" % (counters, nested)
           for _ in [0] if sorted(counters) != sorted(nested)] +
          ["page's order %s, enum's %s" % (nested, order) for _ in [0] if nested != order])

    spec = yaml.safe_load(read("Documentation/netlink/tandem.yaml"))
    uapi = read("kmod/uapi/linux/tandem.h")
    cmds = {first_word(it["head"]): it for it in items
            if it["sh"] == "NETLINK" and it["ss"] == "Commands"}
    probs = []
    for op in spec["operations"]["list"]:
        it = cmds.get(op["name"])
        if not it:
            probs.append("command %s not documented" % op["name"])
            continue
        admin = "admin-perm" in op.get("flags", []) or "Admin." in op.get("doc", "")
        if admin != ("Admin (CAP_SYS_ADMIN)" in it["body"]):
            probs.append("%s: admin in the spec %s, on the page %s" % (op["name"], admin, not admin))
    probs += ["%s is not in the spec" % c for c in cmds
              if c not in [op["name"] for op in spec["operations"]["list"]]]
    check("tandem.4: NETLINK commands are the spec's operations, admin ones marked admin", probs)

    attrs = {first_word(it["head"]): it["head"] for it in items
             if it["sh"] == "NETLINK" and it["ss"] == "Attributes"}
    text = rendered(MAN4)[1]
    probs = []
    for aset in spec["attribute-sets"]:
        for a in aset["attributes"]:
            if aset["name"] == "tandem":
                if a["name"] not in attrs:
                    probs.append("attribute %s not documented" % a["name"])
                elif not attrs[a["name"]].split(None, 1)[1].startswith("(%s," % a["type"]):
                    probs.append("%s: type %s in the spec, '%s' on the page"
                                 % (a["name"], a["type"], attrs[a["name"]]))
            elif not re.search(r"\b(%s|%s)\b" % (re.escape(a["name"]),
                                                  re.escape(a["name"].replace("-", "_"))), text):
                probs.append("attribute %s (set %s) not mentioned" % (a["name"], aset["name"]))
    groups = {first_word(it["head"]) for it in items if it["ss"] == "Multicast groups"}
    probs += ["multicast group %s" % g["name"] for g in spec.get("mcast-groups", {}).get("list", [])
              if g["name"] not in groups]
    cnames = re.findall(r"^\s*(TANDEM_(?:CMD|A)_\w+)", uapi, re.M)
    probs += ["%s (uapi) not mentioned" % n for n in cnames
              if not n.endswith(("_UNSPEC", "_MAX")) and n not in text]
    fam = re.search(r'TANDEM_GENL_NAME\s+"(\w+)"', uapi).group(1)
    ver = re.search(r"TANDEM_GENL_VERSION\s+(\d+)", uapi).group(1)
    if "family %s, version %s" % (fam, ver) not in text:
        probs.append("family %s, version %s (uapi) not in the SYNOPSIS" % (fam, ver))
    check("tandem.4: the spec's attributes with their types, multicast groups, uapi names, "
          "family and version", probs)


check_tandemctl()
check_agent()
check_tandem4()
print("TAP version 13")
print("1..%d" % len(results))
fails = 0
for n, (name, probs) in enumerate(results, 1):
    for p in probs[:40]:
        print("# " + p)
    if len(probs) > 40:
        print("# ... and %d more" % (len(probs) - 40))
    print("%sok %d %s" % ("not " if probs else "", n, name))
    fails += bool(probs)
print("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0" % (len(results) - fails, fails))
sys.exit(1 if fails else 0)
