#!/usr/bin/env python3
"""Checks the AppImage that scripts/package builds: an ELF carrying the type-2 AppImage magic
('AI\\x02' at offset 8) that extracts with its own runtime (`--appimage-extract`, no FUSE needed)
into a tree with AppRun, the desktop entry and icon at its root and both binaries under usr/bin;
then, from that tree, `switchyard --version` answers with the workspace version and the desktop
app starts under Xvfb (relay up on /healthz) and quits on SIGTERM, as check_deb.py does for the .deb.

usage: check_appimage.py APPIMAGE   (run inside scripts/with-keychain: the app opens the keychain)
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_deb import check_cli, check_desktop, check_desktop_entry, log, workspace_version  # noqa: E402

ROOT_FILES = ["AppRun", "Switchyard.desktop", "switchyard-desktop.png", ".DirIcon",
              "usr/bin/switchyard-desktop", "usr/bin/switchyard"]


def main() -> int:
    image = os.path.abspath(sys.argv[1])
    version = workspace_version()
    with open(image, "rb") as f:
        head = f.read(16)
    assert head[:4] == b"\x7fELF" and head[8:11] == b"AI\x02", f"type-2 AppImage magic: {head!r}"
    assert os.access(image, os.X_OK), "the AppImage is executable"
    assert os.path.basename(image) == f"Switchyard_{version}_amd64.AppImage", image
    work = tempfile.mkdtemp(prefix="switchyard-appimage-")
    try:
        subprocess.run([image, "--appimage-extract"], cwd=work, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        root = os.path.join(work, "squashfs-root")
        missing = [p for p in ROOT_FILES if not os.path.lexists(os.path.join(root, p))]
        assert not missing, f"the AppImage lacks {missing}"
        for exe in ("AppRun", "usr/bin/switchyard-desktop", "usr/bin/switchyard"):
            assert os.access(os.path.join(root, exe), os.X_OK), f"{exe} is executable"
        apprun = open(os.path.join(root, "AppRun")).read()
        assert 'usr/bin/switchyard-desktop"' in apprun, f"AppRun starts the desktop app:\n{apprun}"
        log(f"AppImage magic, extraction and contents ok ({os.path.getsize(image)} bytes)")
        check_desktop_entry(root)
        check_cli(root, version)
        check_desktop(root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log("AppImage ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
