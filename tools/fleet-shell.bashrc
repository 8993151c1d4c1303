# Read by the bash of a window a person opens in the fleet session (tools/fleet-shell) in
# place of ~/.bashrc: the person's ~/.bashrc as usual, then Flotilla's tools first on PATH
# again, whatever that file did to PATH.
if [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
case ":$PATH:" in
  ":$FLOTILLA_TOOLS:"*) ;;
  *) PATH="$FLOTILLA_TOOLS:$PATH" ;;
esac
