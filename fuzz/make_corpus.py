#!/usr/bin/env python3
"""Seed corpora and dictionaries for the fuzz targets in fuzz/, made at run time.

    fuzz/make_corpus.py OUTDIR

writes OUTDIR/<target>/ (seed files, named by content hash) and OUTDIR/<target>.dict for the
targets pqr, xyzq, gzip, options, values, selection, prmtop, trajectory and mesh:
- pqr: the first ~2 KB (whole lines) of every PQR file of Debian's apbs-data package
  (/usr/share/apbs, 73 files), tests/data/pqr/*.pqr and the hand-written fuzz/seeds/pqr/*;
- xyzq: the same atoms as "x y z q" lines, tests/data/pqr/*.xyzq, fuzz/seeds/xyzq/*;
- gzip: in fuzz_gzip's layout (see fuzz_gzip.cpp): some PQR and xyzq seeds compressed by the
  target in 1-4 members, with trailing zeros, garbage or truncation, as real .gz bytes and as
  plain files, plus fuzz/seeds/gzip/*;
- options: the README's command lines, one argument per line, plus fuzz/seeds/options/*; its
  dictionary holds every option name found in apps/dcs/*.cpp, so it never goes stale;
- values: sizes, units, devices, shards and file names, plus fuzz/seeds/values/*;
- selection: selection texts (every keyword, wildcard, range spelling and operator, and the
  errors), plus fuzz/seeds/selection/*; its dictionary holds the keywords and operators.
- prmtop: fuzz/seeds/prmtop/* and, with the venv of scripts/setup-md.sh, MDAnalysisTests'
  small AMBER parm7 files (good and broken) and the first 4 KB of bala/ache.prmtop;
- trajectory: in fuzz_trajectory's layout, fuzz/seeds/trajectory/* and, with that venv, 3-frame
  DCD/XTC/TRR/NetCDF files of 5 and 12 atoms written by MDAnalysis (whole, doubled, cut),
  MDAnalysisTests' small NetCDF files and the first 4 KB of its large trajectories.
- mesh: in fuzz_mesh's layout (byte 0: format, bit 2: write and read back), the meshes VTK
  wrote into tests/data/mesh (PLY, OBJ, VTK 4.2/5.1, ASCII and binary, strips), whole and cut,
  plus fuzz/seeds/mesh/*.
Nothing here is committed: the corpora are rebuilt from the installed data each run (libFuzzer
adds what it finds to the same directories; scripts/run-fuzzers.sh starts them afresh).
"""
import glob
import gzip
import hashlib
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
APBS = "/usr/share/apbs"
HEAD_BYTES = 2048


def put(directory, data):
    if isinstance(data, str):
        data = data.encode("latin-1")
    os.makedirs(directory, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(directory, name), "wb") as out:
        out.write(data)


def head(path, limit=HEAD_BYTES):
    """The first `limit` bytes of a file, cut after the last whole line."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        data = data[:limit]
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if cut > 0:
            data = data[: cut + 1]
    return data


def hand_seeds(target):
    return [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(HERE, "seeds", target, "*")))]


def to_xyzq(pqr):
    """The atoms of PQR text as xyzq lines (the last five numbers: x y z q r)."""
    lines = ["# converted from PQR"]
    for line in pqr.decode("latin-1").splitlines():
        if not line.upper().startswith(("ATOM", "HETATM")):
            continue
        fields = line.split()
        if len(fields) >= 9:
            lines.append(" ".join(fields[-5:-1]))
    return ("\n".join(lines) + "\n").encode("latin-1")


def write_dict(path, words):
    """A libFuzzer dictionary: one quoted token a line, \\xNN for what is not printable."""
    with open(path, "w", encoding="ascii") as d:
        for word in words:
            quoted = "".join(c if " " <= c <= "~" and c not in '"\\' else f"\\x{ord(c):02X}"
                             for c in word)
            d.write(f'"{quoted}"\n')


def gzip_seed(flags, a, b, text):
    return bytes([flags, a, b]) + text


# Written by the MDAnalysis venv's Python (scripts/setup-md.sh): 3 frames of the first 5 and
# 12 atoms of adk (12: XTC compresses from 10 atoms on) in every trajectory format dcs reads.
WRITE_SMALL_TRAJECTORIES = """
import os, sys, warnings
warnings.filterwarnings("ignore")
import MDAnalysis as mda, MDAnalysisTests.datafiles as d
u = mda.Universe(d.PSF, d.DCD)
for n in (5, 12):
    for ext in ("dcd", "xtc", "trr", "ncdf"):
        with mda.Writer(os.path.join(sys.argv[1], f"s{n}.{ext}"), n_atoms=n) as w:
            for ts in u.trajectory[:3]:
                w.write(u.atoms[:n])
print(os.path.dirname(d.PSF))
"""
TRAJECTORY_KIND = {".dcd": 0, ".xtc": 1, ".trr": 2, ".nc": 3, ".ncdf": 3}


def trajectory_seed(kind, atoms, data, twice=False):
    """fuzz_trajectory's layout: kind (| 4: the file twice), atoms - 1 (u16 LE), the file."""
    return bytes([kind | (4 if twice else 0), (atoms - 1) & 0xFF, (atoms - 1) >> 8]) + data


def md_seeds(out):
    """prmtop and trajectory seeds: hand-written ones, and where the venv of scripts/setup-md.sh
    exists, small trajectories written by MDAnalysis plus heads of MDAnalysisTests' files."""
    prmtop = os.path.join(out, "prmtop")
    traj = os.path.join(out, "trajectory")
    for data in hand_seeds("prmtop"):
        put(prmtop, data)
    for data in hand_seeds("trajectory"):
        put(traj, data)
    python = os.path.join(ROOT, ".venv-md", "bin", "python")
    if not os.path.exists(python):
        print("make_corpus: no .venv-md (scripts/setup-md.sh); prmtop and trajectory get the "
              "hand-written seeds only", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = subprocess.run([python, "-c", WRITE_SMALL_TRAJECTORIES, tmp], check=True,
                                  capture_output=True, text=True).stdout.strip()
        for name in sorted(os.listdir(tmp)):
            stem, ext = os.path.splitext(name)
            data = open(os.path.join(tmp, name), "rb").read()
            atoms = int(stem[1:])
            put(traj, trajectory_seed(TRAJECTORY_KIND[ext], atoms, data))
            put(traj, trajectory_seed(TRAJECTORY_KIND[ext], atoms, data, twice=True))
            put(traj, trajectory_seed(TRAJECTORY_KIND[ext], atoms, data[: len(data) * 2 // 3]))
    amber = os.path.join(data_dir, "Amber")
    for name, atoms in (("ace_mbondi3.nc", 6), ("cpptraj_traj.nc", 84)):
        path = os.path.join(amber, name)
        if os.path.exists(path):
            put(traj, trajectory_seed(3, atoms, open(path, "rb").read()))
    # Heads of the large files: the headers and the first bytes of a frame.
    for name, atoms in (("adk_dims.dcd", 3341), ("adk_oplsaa.xtc", 47681), ("adk_oplsaa.trr", 47681),
                        (os.path.join("Amber", "bala.ncdf"), 2661)):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            kind = TRAJECTORY_KIND[os.path.splitext(path)[1]]
            put(traj, trajectory_seed(kind, atoms, open(path, "rb").read(4096)))
    for name in ("ace_mbondi3.parm7", "ace_mbondi3.error1.parm7", "ace_mbondi3.error2.parm7",
                 "ace_mbondi3.error3.parm7", "ace_mbondi3.negative.parm7"):
        path = os.path.join(amber, name)
        if os.path.exists(path):
            put(prmtop, open(path, "rb").read())
    for name in ("bala.prmtop", "ache.prmtop"):
        path = os.path.join(amber, name)
        if os.path.exists(path):
            put(prmtop, head(path, 4096))
    write_dict(os.path.join(out, "prmtop.dict"),
               ["%FLAG ", "%FORMAT(", "%COMMENT", "%VERSION", "POINTERS", "ATOM_NAME", "CHARGE",
                "RESIDUE_LABEL", "RESIDUE_POINTER", "MASS", "20a4", "10I8", "5E16.8", "1a80",
                "\r\n", "nan", "inf", "E+99", "       0", "-1"])


def mesh_seeds(out):
    """fuzz_mesh: byte 0 picks the format (0 PLY, 1 OBJ, 2 VTK; bit 2: write and read back)."""
    directory = os.path.join(out, "mesh")
    codes = {".ply": 0, ".obj": 1, ".vtk": 2}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "mesh", "*"))):
        code = codes.get(os.path.splitext(path)[1])
        if code is None:
            continue
        data = open(path, "rb").read()
        put(directory, bytes([code]) + data)
        put(directory, bytes([code | 4]) + data)
        put(directory, bytes([code]) + data[: len(data) * 2 // 3])
    for data in hand_seeds("mesh"):
        put(directory, data)
    write_dict(os.path.join(out, "mesh.dict"),
               ["ply", "format ascii 1.0", "format binary_little_endian 1.0",
                "format binary_big_endian 1.0", "element vertex ", "element face ", "property float ",
                "property double ", "property uchar ", "property list uchar int vertex_indices",
                "property list int uint vertex_index", "end_header", "comment ", "nx", "v ", "vn ",
                "f ", "//", "/", "-1", "# vtk DataFile Version 5.1", "ASCII", "BINARY",
                "DATASET POLYDATA", "POINTS ", "POLYGONS ", "TRIANGLE_STRIPS ", "VERTICES ", "LINES ",
                "OFFSETS vtktypeint64", "CONNECTIVITY vtktypeint64", "POINT_DATA ", "CELL_DATA ",
                "NORMALS n float", "SCALARS s float 1", "LOOKUP_TABLE default", "COLOR_SCALARS c 3",
                "FIELD FieldData 1", "METADATA", "INFORMATION 0", "nan", "1e30", "4294967295"])


def text_seeds(out):
    """The PQR seeds (the apbs-data corpus' heads, tests/data, fuzz/seeds) and the xyzq seeds
    (every fourth PQR one converted, tests/data, fuzz/seeds), each written under out."""
    pqr_files = sorted(glob.glob(os.path.join(APBS, "**", "*.pqr"), recursive=True))
    if not pqr_files:
        print(f"make_corpus: no PQR files under {APBS} (Debian package apbs-data); "
              "using tests/data and fuzz/seeds only", file=sys.stderr)
    pqr_files += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "pqr", "*.pqr")))
    pqr_seeds = []
    for path in pqr_files:
        data = head(path)
        if data and data not in pqr_seeds:
            pqr_seeds.append(data)
    pqr_seeds += hand_seeds("pqr")
    for data in pqr_seeds:
        put(os.path.join(out, "pqr"), data)

    xyzq_seeds = [to_xyzq(d) for d in pqr_seeds[::4]]
    xyzq_seeds += [head(p) for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "pqr", "*.xyzq")))]
    xyzq_seeds += hand_seeds("xyzq")
    for data in xyzq_seeds:
        put(os.path.join(out, "xyzq"), data)
    return pqr_seeds, xyzq_seeds


def gzip_seeds(out, pqr_seeds, xyzq_seeds):
    """fuzz_gzip's seeds: built, raw and plain files from the text seeds, and fuzz/seeds."""
    # fuzz_gzip: flags bit 0 xyzq, bit 1 read_models, bits 2-3 mode (0 built, 2 raw, 3 plain);
    # built: A = members-1 | tail << 2 | n << 4, B = level (| 0x80: cross the 128 KiB block).
    gz = os.path.join(out, "gzip")
    for i, text in enumerate(pqr_seeds[::6]):
        put(gz, gzip_seed(0x00, 0x00, 6, text))                  # one member
        put(gz, gzip_seed(0x02, 0x03, 9, text))                  # four members, read_models
        put(gz, gzip_seed(0x00, 0x01 | 1 << 2 | 7 << 4, 1, text))  # two members + 8 zero bytes
        put(gz, gzip_seed(0x00, 0x00 | 2 << 2 | (i % 16) << 4, 6, text))  # trailing garbage
        put(gz, gzip_seed(0x00, 0x00 | 3 << 2, 6, text))         # truncated by one byte
        put(gz, gzip_seed(0x00, 0x00, 0x80 | 6, text))           # across the 128 KiB block
        put(gz, bytes([0x08]) + gzip.compress(text, mtime=0))    # raw .gz bytes
        put(gz, bytes([0x08]) + gzip.compress(text[: len(text) // 2], mtime=0) +
            gzip.compress(text[len(text) // 2:], mtime=0) + b"garbage")
        put(gz, bytes([0x0C]) + text)                            # plain .pqr
    for text in xyzq_seeds[::3]:
        put(gz, gzip_seed(0x01, 0x01, 6, text))
        put(gz, bytes([0x09]) + gzip.compress(text, mtime=0))
        put(gz, bytes([0x0D]) + text)
    for data in hand_seeds("gzip"):
        put(gz, data)


def option_seeds(out):
    """fuzz_options' seeds and dictionary: the README's command lines and every option name."""
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    options = os.path.join(out, "options")
    for line in re.findall(r"^dcs (.+?)(?:\s+#.*)?$", readme, flags=re.M):
        args = [a for a in line.split() if a not in ("...", "[--cpu]", "[--potential]", "[--reductions]")]
        put(options, "\n".join(args))
    for data in hand_seeds("options"):
        put(options, data)
    # Every option the command line defines (cli.cpp, run_options.cpp, ...).
    cli = "".join(open(path, encoding="utf-8").read()
                  for path in sorted(glob.glob(os.path.join(ROOT, "apps", "dcs", "*.cpp"))))
    names = set()
    for spec in re.findall(r'add_(?:option|flag|subcommand)\(\s*"([^"]+)"', cli):
        names.update(n for n in spec.split(",") if n)
    words = sorted(names) + ["auto", "cpu", "cuda", "cuda:0", "cuda:0,1", "first", "each", "average",
                            "common", "own", "static", "dynamic", "slurm", "0/2", "kT/e", "kcal/mol/e",
                            "kJ/mol/e", "V", "e/A", "2G", "512M", "1.5GiB", "m.pqr", "m.pqr.gz", "m.xyzq",
                            "out.h5", "x.dx.gz", "-1", "0", "1e308", "nan", "inf", "1e-300", "129",
                            "1000000", "1000001", "0x10", "--", "-", "=", "\n", "::10", "0:10:2",
                            "-1:", "name CA", "protein", "m.psf", "m.prmtop", "m.tpr", "m.dcd",
                            "m.xtc", "m.nc"]
    write_dict(os.path.join(out, "options.dict"), words)


def value_seeds(out):
    """fuzz_values' seeds: memory sizes, units, devices, shares and output names by kind."""
    values = os.path.join(out, "values")
    for text in ["2G", "512M", "1.5GiB", "4096", "1K", "1kib", "0.5B", "1e18", "1T", " 2G", "-1"]:
        put(values, b"\x00" + text.encode())
    for text in ["kT/e", "kcal/mol/e", "kJ/mol/e", "V", "e/A"]:
        put(values, b"\x01" + text.encode())
    for text in ["auto", "cpu", "cuda", "cuda:0", "cuda:0,1,2", "cuda:", "cuda:9999,"]:
        put(values, b"\x02" + text.encode())
    for text in ["0/1", "1/3", "2/2", "-1/2", "0/0", "9223372036854775807/9223372036854775807"]:
        put(values, b"\x03" + text.encode())
    for text in ["mol.pqr", "dir/mol.pqr.gz", ".pqr", "a.b.c.xyzq.gz", "/", ""]:
        put(values, b"\x04" + text.encode())
    for data in hand_seeds("values"):
        put(values, data)


def selection_seeds(out):
    """fuzz_selection's seeds and dictionary: valid and broken selections."""
    selection = os.path.join(out, "selection")
    for text in ["all", "none", "name CA", "name CA CB N", "name C* ?H [!CN]* [a-z]", "resname GL? HS[DEP]",
                 "resid 1:10 20-30 40 to 50 -5--3", "resid 1 : 5 7- 9", "index 0 5:9", "bynum 1 100-200",
                 "segid PROA", "chainID A B", "chainid A", "chain A", "protein", "backbone", "nucleic",
                 "protein and not backbone", "name CA or name CB and resid 5",
                 "not (segid PROA and name CA) or (resid 1:3 and not protein)", "((all))", "name \\protein",
                 "", "nam CA", "name", "(name CA", "name CA)", "resid 5:3", "resid 1.5", "resid 10A",
                 "protein backbone", "name CA and", "not", "()", "name [z-a] [b-a-c] [!] [", "resid 1:5x",
                 "around 5 protein", "resname NA+ and around 12 protein", "sphzone 9.5 resid 5",
                 "sphlayer 2 8 name CA and resid 1:3", "byres around 3 protein",
                 "same residue as (name OW and around 3.2 resid 4)", "not around 0 all",
                 "around -1 all", "sphlayer 8 4 all", "same resid as all", "around", "byres"]:
        put(selection, text.encode())
    for data in hand_seeds("selection"):
        put(selection, data)
    write_dict(os.path.join(out, "selection.dict"),
               ["all", "none", "name", "resname", "resid", "segid", "chainID", "chainid", "chain",
                "index", "bynum", "protein", "backbone", "nucleic", "around", "sphzone", "sphlayer",
                "byres", "same", "residue", "as", "not", "and", "or", "(", ")",
                " ", "*", "?", "[", "]", "[!", "-", ":", " to ", "\\", "CA", "PROA", "1:5", "-3--1",
                "9223372036854775807", "-9223372036854775808", "99999999999999999999"])


def text_dicts(out):
    """The PQR and xyzq fuzzers' dictionaries."""
    write_dict(os.path.join(out, "pqr.dict"),
               ["ATOM", "HETATM", "MODEL", "ENDMDL", "REMARK", "TER", "END", "CRYST1", "USER", "atom",
                "AT0M", "        ", "\r\n", "\r", "\t", "-", ".", "e-5", "1e30", "nan", "inf",
                "0.500010.0000", "-45.751-100.406", "HETATM10000", "A1000", "52A", "OH2TIP3",
                "  1.8240", "-0.5000", "9999999"])
    write_dict(os.path.join(out, "xyzq.dict"), ["#", " ", "\t", "\r\n", "\r", "-", ".", "e-5", "1e6",
                                                "1e30", "nan", "inf", "0x1p3", "+", "+-1"])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    pqr_seeds, xyzq_seeds = text_seeds(out)
    gzip_seeds(out, pqr_seeds, xyzq_seeds)
    option_seeds(out)
    value_seeds(out)
    selection_seeds(out)
    text_dicts(out)
    md_seeds(out)
    mesh_seeds(out)
    counts = {t: len(os.listdir(os.path.join(out, t)))
              for t in ("pqr", "xyzq", "gzip", "options", "values", "selection", "prmtop",
                        "trajectory", "mesh")}
    print("make_corpus: " + ", ".join(f"{t} {n} seeds" for t, n in counts.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
