#!/usr/bin/env bash
# Installs Python 3.13 for the agent CLIs that need Python >= 3.12 (Mistral
# Vibe), which this Debian release does not package. It takes Debian 13's
# python3.13 packages from Debian's own archive (the same registry apt uses
# here), unpacks them with every library they need into
# target/python313/root (nothing is installed system-wide and the system's
# libraries are not touched), and points the interpreter at the unpacked C
# library and loader with patchelf, so the binary runs on this release.
# Idempotent. Prints the interpreter's path on success.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$PWD/target/python313"
py="$dest/root/usr/bin/python3.13"
if [ -x "$py" ] && "$py" -c 'import ssl, sqlite3, ctypes' 2>/dev/null; then
  echo "$py"
  exit 0
fi
if ! command -v patchelf >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { echo "patchelf is missing and we are not root to install it" >&2; exit 1; }
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >/dev/null 2>&1 \
    || { echo "apt-get could not install patchelf" >&2; exit 1; }
fi
rm -rf "$dest"
apt_root="$dest/apt"
mkdir -p "$apt_root/etc/apt/apt.conf.d" "$apt_root/etc/apt/preferences.d" \
  "$apt_root/var/lib/apt/lists/partial" "$apt_root/var/cache/apt/archives/partial" \
  "$apt_root/var/lib/dpkg" "$dest/root"
touch "$apt_root/var/lib/dpkg/status"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  > "$apt_root/etc/apt/sources.list"
# A private apt state: an empty package database, so the whole dependency
# closure of python3.13-venv is downloaded (and nothing is installed).
apt=(apt-get -q -o "Dir=$apt_root" -o "Dir::State::status=$apt_root/var/lib/dpkg/status"
  -o "Dir::Etc::Parts=$apt_root/etc/apt/apt.conf.d" -o Debug::NoLocking=1
  -o APT::Architecture=amd64 -o APT::Install-Recommends=false)
"${apt[@]}" update >/dev/null || { echo "apt-get update of Debian 13's lists failed" >&2; exit 1; }
"${apt[@]}" install -y --download-only python3.13-venv >/dev/null \
  || { echo "apt-get could not download python3.13" >&2; exit 1; }
for deb in "$apt_root"/var/cache/apt/archives/*.deb; do
  dpkg-deb -x "$deb" "$dest/root"
done
lib="$dest/root/usr/lib/x86_64-linux-gnu"
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$py"
rm -rf "$apt_root"
"$py" -c 'import ssl, sqlite3, ctypes' || { echo "the unpacked python3.13 does not run" >&2; exit 1; }
echo "$py"
