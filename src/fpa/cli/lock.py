"""``fpa lock CONFIG``: pin the config's hub models and data files (``--check``: verify only)."""

from __future__ import annotations


def lock_command(args) -> None:
    from fpa.config.catalog import load_catalog
    from fpa.data.lock import lock
    from fpa.planning import judge

    config = judge([args.config]).config
    for line in lock(args.config, config, load_catalog(config, args.config), check=args.check):
        print(line)
    print(f"{args.config}: every hub model and data file {'is' if args.check else 'now'} pinned")


def register(commands) -> None:
    parser = commands.add_parser("lock")
    parser.add_argument("config", help="the config file; its models and its catalog (data.catalog) are edited")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail if an input is unpinned or differs from its pin")
    parser.set_defaults(handler=lock_command)
