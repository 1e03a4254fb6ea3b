# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the setup scripts that fetch Debian packages (source or binary) without touching
# the machine's apt set-up: a private apt configuration (own sources list, own lists and cache
# directories) that reads only the machine's mirror and keyring.
#
#   . "$(dirname "$0")/apt_private.sh"
#   apt_private_init WORKDIR            # sets APT_PRIVATE (an array of apt -o options)
#   apt_private_sources "deb-src" unstable testing    # one line per suite, then apt-get update
#   apt-get "${APT_PRIVATE[@]}" source -qq "pkg=$ver"
#
# Callers define log() and die() before sourcing.

# apt_mirror -> the machine's Debian mirror, read from its apt configuration (deb822 or one-line
# form); empty when there is none.
apt_mirror() {
    { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}';
      grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
          | sed -E 's/\[[^]]*\]//' | awk '{print $2}'; } \
        | grep -E '/debian/?$' | head -n1 || true
}

# apt_private_init WORKDIR: the private configuration's directories under WORKDIR and the
# options array APT_PRIVATE; APT_MIRROR is the machine's mirror (dies when there is none).
apt_private_init() {
    APT_WORK=$1
    APT_MIRROR=$(apt_mirror)
    [ -n "$APT_MIRROR" ] || die "no Debian mirror found in /etc/apt"
    mkdir -p "$APT_WORK/lists/partial" "$APT_WORK/cache/archives/partial"
    : > "$APT_WORK/status"
    APT_PRIVATE=(-o "Dir::Etc::SourceList=$APT_WORK/sources.list"
                 -o "Dir::Etc::SourceParts=/dev/null"
                 -o "Dir::State::Lists=$APT_WORK/lists" -o "Dir::Cache=$APT_WORK/cache"
                 -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=/dev/null"
                 -o "Debug::NoLocking=1" -o "APT::Get::List-Cleanup=0"
                 -o "APT::Sandbox::User=$(id -un)")
}

# apt_private_sources KIND SUITE...: the private sources list (KIND deb or deb-src, component
# main) for those suites, then its update. Returns non-zero when the update fails.
apt_private_sources() {
    local kind=$1 suite; shift
    : > "$APT_WORK/sources.list"
    for suite in "$@"; do
        echo "$kind [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $APT_MIRROR" \
             "$suite main" >> "$APT_WORK/sources.list"
    done
    apt-get "${APT_PRIVATE[@]}" update -qq >&2 2>"$APT_WORK/update.err"
}

# apt_machine_suite -> the release the machine runs (bookworm on Debian 12), else "stable".
apt_machine_suite() {
    local s
    s=$( . /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}" )
    echo "${s:-stable}"
}

# ensure_packages PKG...: the Debian packages a build needs, installed when missing (as root,
# with the machine's own apt); otherwise dies naming them and the command that installs them.
ensure_packages() {
    local missing p
    missing=$(for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
              | grep -q 'install ok installed' || echo "$p"; done)
    [ -n "$missing" ] || return 0
    if [ "$(id -u)" = 0 ]; then
        log "installing build dependencies: $(echo $missing)"
        apt-get update -qq >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null \
            || die "apt-get install failed for: $(echo $missing)"
    else
        die "missing packages: $(echo $missing); run: sudo apt-get install $(echo $missing)"
    fi
}
