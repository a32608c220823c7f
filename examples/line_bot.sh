#!/bin/sh
# A Basilica bot in POSIX shell (protocol/BOTS.md): it plays the first legal action.
#   basilica tournament --bots "cmd:sh examples/line_bot.sh,random" --games 2 --jobs 1
set -f  # "V*" is an action, not a file pattern
first=""
while IFS= read -r line; do
    set -- $line
    case "$1" in
        basilica-bot) echo "ok basilica-bot 1 name=first-legal-sh" ;;
        newgame) echo "ready" ;;
        legal) first=$3 ;;  # "legal <count> <first> ..."
        go) echo "action $first" ;;
        quit) exit 0 ;;
    esac
done
