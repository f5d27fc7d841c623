// The commonest passwords (lower case), from the well-known public top lists. passwords.ts also
// lower-cases, strips trailing digits and symbols and undoes common letter swaps before looking here.
export const COMMON_PASSWORDS = `
123456 password 12345678 qwerty 123456789 12345 1234 111111 1234567 dragon 123123 baseball abc123
football monkey letmein 696969 shadow master 666666 qwertyuiop 123321 mustang 1234567890 michael
654321 superman 1qaz2wsx 7777777 121212 000000 qazwsx 123qwe killer trustno1 jordan jennifer
zxcvbnm asdfgh hunter buster soccer harley batman andrew tigger sunshine iloveyou 2000 charlie
robert thomas hockey ranger daniel starwars klaster 112233 george computer michelle jessica
pepper 1111 zxcvbn 555555 11111111 131313 freedom 777777 pass maggie 159753 aaaaaa ginger princess
joshua cheese amanda summer love ashley nicole chelsea biteme matthew access yankees 987654321
dallas austin thunder taylor matrix minecraft william corvette hello martin heather secret merlin
diamond 1234qwer gfhjkm hammer silver 222222 88888888 anthony justin test bailey q1w2e3r4t5
patrick internet scooter orange 11111 golfer cookie richard samantha bigdog guitar jackson whatever
mickey chicken sparky snoopy maverick phoenix camaro peanut morgan welcome falcon cowboy ferrari
samsung andrea smokey steelers joseph mercedes dakota arsenal eagles melissa boomer booboo spider
nascar monster tigers yellow xxxxxx 123123123 gateway marina diablo bulldog qwer1234 compaq
purple hardcore banana junior hannah 123654 porsche lakers iceman money cowboys 987654 london
tennis 999999 ncc1701 coffee scooby 0000 miller boston q1w2e3r4 brandon yamaha chester mother
forever johnny edward 333333 oliver redsox player nikita knight fender barney midnight please
brandy chicago badboy slayer rangers charles angel flower bigdaddy rabbit wizard jasper enter
rachel chris steven winner adidas victoria natasha 1q2w3e4r jasmine winter prince panties marine
ghbdtn fishing cocacola casper james 232323 raiders 888888 marlboro gandalf asdfasdf crystal
87654321 12344321 golden 8675309 enjoy 1q2w3e4r5t admin administrator root toor changeme default
guest login passw0rd p@ssw0rd p@ssword qwerty123 welcome1 letmein1 iloveyou1 monkey1 dragon1
password1 abc12345 football1 baseball1 superman1 sunshine1 princess1 azerty solo starwars1 zaq12wsx
qazwsxedc 1qazxsw2 asdfghjkl zxcvbnm123 qweasdzxc 1q2w3e 1qaz2wsx3edc qwertyui qwertyuiop123
asdfghjkl123 zaq1xsw2cde3 changeit secret123 letmein123 password123 password1234 passwordpassword
iloveyou123 welcome123 admin123 admin1234 administrator1 rootroot test1234 testtest qwerty12345
abcdef abcdefg abcdefgh abcdefghijkl abcdefghijklmnop 0123456789 012345678901 123456789012 1234567890123
12345678910 11223344 1122334455 123456123456 147258369 159357 741852963 963852741 789456123
456789 a1b2c3d4 a1b2c3 aa123456 myspace1 lovely 555666 mypassword mysecret secretpassword supersecret
letmeinnow opensesame correcthorsebatterystaple
`.split(/\s+/).filter(Boolean);
