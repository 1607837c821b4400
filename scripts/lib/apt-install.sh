# Sourced by scripts/install-*.sh: installs Debian packages with apt-get, as root or through
# sudo, saying what it does. Usage: apt_install TAG PACKAGE... (TAG prefixes every message).
# Returns 1 with a reason on stderr when apt-get or root is missing, so the caller can say
# what to install by hand (or a test can skip and say why).

apt_install() {
  local tag="$1"
  shift
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$tag: apt-get is not available; install $* by hand" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    # sudo -n: never wait on a password prompt inside a test run.
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      echo "$tag: this is not root and sudo is not available without a password; run as root" >&2
      return 1
    fi
  fi
  echo "$tag: installing Debian's $* with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
  APT_INSTALL_SUDO="$sudo"
}
