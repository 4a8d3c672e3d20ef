from jitfix.cli import main

main()
