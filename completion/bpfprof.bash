# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# bash completion for bpfprof.  The commands, their options and the values an
# option takes come from bpfprof itself (`bpfprof --list-options[=COMMAND]`,
# made from the same tables as --help and the man pages); pids for -p/--pid
# from /proc; function names for -F/--function from `bpfprof list`, of the
# command after `--` (record) or of the process given with -p (attach, serve).
# Installed as /usr/share/bash-completion/completions/bpfprof.

# The options of a command: "--name<TAB>-c<TAB>ARG<TAB>values" lines.
_bpfprof_options()
{
	"${_bpfprof_bin:-bpfprof}" --list-options="$1" 2>/dev/null
}

# The functions `bpfprof list` finds in a binary or a process (its last column).
_bpfprof_functions()
{
	local cmd=$1 i target="" pid=""
	for ((i = 2; i < ${#COMP_WORDS[@]}; i++)); do
		case ${COMP_WORDS[i]} in
		-p | --pid) pid=${COMP_WORDS[i + 1]%%,*} ;;
		--pid=*) pid=${COMP_WORDS[i]#--pid=}; pid=${pid%%,*} ;;
		--) target=${COMP_WORDS[i + 1]}; break ;;
		esac
	done
	if [[ -n $pid ]]; then
		"${_bpfprof_bin:-bpfprof}" list --pid "$pid" 2>/dev/null
	elif [[ -n $target ]]; then
		"${_bpfprof_bin:-bpfprof}" list "$target" 2>/dev/null
	fi | awk 'NR > 1 && $1 ~ /^0x/ && NF >= 8 { print $NF }'
}

_bpfprof()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local bin=${COMP_WORDS[0]} cmd="" i line name short arg values
	# the bpfprof being completed (./bpfprof in a source tree), when it runs
	[[ -x $bin ]] && _bpfprof_bin=$bin || _bpfprof_bin=bpfprof
	COMPREPLY=()

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) break ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-v -q -h --verbose --quiet --help --version --man
				--list-options" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$_bpfprof_bin" --list-options 2>/dev/null) help" \
				-- "$cur"))
		fi
		return
	fi
	# after `--` (record): the command and its own arguments
	for ((i = i + 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i + 1 == COMP_CWORD)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done

	# the value of the option before the cursor
	if [[ $prev == -* ]]; then
		while IFS=$'\t' read -r name short arg values; do
			[[ $prev == "$name" || $prev == "$short" ]] || continue
			[[ $arg == - || $arg == \[=* ]] && break
			case $values in
			@pids) COMPREPLY=($(compgen -W "$(cd /proc && printf '%s\n' [0-9]*)" -- "$cur")) ;;
			@functions) COMPREPLY=($(compgen -W "$(_bpfprof_functions "$cmd")" -- "$cur")) ;;
			@dirs) COMPREPLY=($(compgen -d -- "$cur")) ;;
			@files) COMPREPLY=($(compgen -f -- "$cur")) ;;
			-) COMPREPLY=($(compgen -f -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "$values" -- "$cur")) ;;
			esac
			return
		done < <(_bpfprof_options "$cmd")
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_bpfprof_options "$cmd" | cut -f1,2 | tr '\t' ' ' |
			sed 's/ -$//')" -- "$cur"))
		return
	fi
	if [[ $cmd == help ]]; then
		COMPREPLY=($(compgen -W "$("$_bpfprof_bin" --list-options 2>/dev/null)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

complete -F _bpfprof bpfprof
