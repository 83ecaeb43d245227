from programgen import main

main()
