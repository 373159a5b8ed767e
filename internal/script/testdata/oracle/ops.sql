-- pgbench: -M simple -t 1 -D sy=yes -D sof=of -D st=t -D sn=n -D snull=NuLl -D sd=1e3 -D si=' 12' -D sp=+5 -D sneg=-7 -D sdd=2.50 -D son=ON
-- Every operator, every deterministic function, and pgbench's text form of
-- each result, recorded through simple-mode substitution inside quotes.
\set a 7
\set b -3
\set d 2.5
INSERT INTO out VALUES ('add', ':a'), ('sub', ':b');
\set r :a + :b
INSERT INTO out VALUES ('a+b', ':r');
\set r :a - :b
INSERT INTO out VALUES ('a-b', ':r');
\set r :a * :b
INSERT INTO out VALUES ('a*b', ':r');
\set r :a / :b
INSERT INTO out VALUES ('a/b', ':r');
\set r :a % :b
INSERT INTO out VALUES ('a%b', ':r');
\set r -7 / 2
INSERT INTO out VALUES ('-7/2', ':r');
\set r -7 % 2
INSERT INTO out VALUES ('-7%2', ':r');
\set r :a / -1
INSERT INTO out VALUES ('a/-1', ':r');
\set r :a % -1
INSERT INTO out VALUES ('a%-1', ':r');
\set r :a + :d
INSERT INTO out VALUES ('a+d', ':r');
\set r :a - :d
INSERT INTO out VALUES ('a-d', ':r');
\set r :a * :d
INSERT INTO out VALUES ('a*d', ':r');
\set r :a / :d
INSERT INTO out VALUES ('a/d', ':r');
\set r 7.5 % 2
INSERT INTO out VALUES ('7.5%2', ':r');
\set r 6.5 % 4
INSERT INTO out VALUES ('6.5%4', ':r');
\set r 1.0 / 3
INSERT INTO out VALUES ('1.0/3', ':r');
\set r 2.0 / 3
INSERT INTO out VALUES ('2.0/3', ':r');
\set r 1e20
INSERT INTO out VALUES ('1e20', ':r');
\set r 1e15
INSERT INTO out VALUES ('1e15', ':r');
\set r 1e14
INSERT INTO out VALUES ('1e14', ':r');
\set r 123456789012345.0
INSERT INTO out VALUES ('123456789012345.0', ':r');
\set r 1234567890123456.0
INSERT INTO out VALUES ('1234567890123456.0', ':r');
\set r 0.1 + 0.2
INSERT INTO out VALUES ('0.1+0.2', ':r');
\set r 0.0001
INSERT INTO out VALUES ('0.0001', ':r');
\set r 0.00001
INSERT INTO out VALUES ('0.00001', ':r');
\set r -0.0
INSERT INTO out VALUES ('-0.0', ':r');
\set r 0.0 * -1
INSERT INTO out VALUES ('0.0*-1', ':r');
\set r 1. + .5
INSERT INTO out VALUES ('1.+.5', ':r');
\set r 3e-2
INSERT INTO out VALUES ('3e-2', ':r');
\set r 1.0 / 0
INSERT INTO out VALUES ('1.0/0', ':r');
\set r -1.0 / 0
INSERT INTO out VALUES ('-1.0/0', ':r');
\set r 0.0 / 0
INSERT INTO out VALUES ('0.0/0', ':r');
\set r sqrt(-1)
INSERT INTO out VALUES ('sqrt(-1)', ':r');
\set r ln(0)
INSERT INTO out VALUES ('ln(0)', ':r');
\set r ln(-1)
INSERT INTO out VALUES ('ln(-1)', ':r');
\set r exp(1000)
INSERT INTO out VALUES ('exp(1000)', ':r');
\set r pow(-8, 1.0 / 3)
INSERT INTO out VALUES ('pow(-8,1/3)', ':r');
\set r 5 = 5
INSERT INTO out VALUES ('5=5', ':r');
\set r 5 <> 5
INSERT INTO out VALUES ('5<>5', ':r');
\set r 5 != 4
INSERT INTO out VALUES ('5!=4', ':r');
\set r 4 < 5
INSERT INTO out VALUES ('4<5', ':r');
\set r 4 <= 4
INSERT INTO out VALUES ('4<=4', ':r');
\set r 4 > 5
INSERT INTO out VALUES ('4>5', ':r');
\set r 4 >= 5
INSERT INTO out VALUES ('4>=5', ':r');
\set r 4.5 < 5
INSERT INTO out VALUES ('4.5<5', ':r');
\set r 5 = 5.0
INSERT INTO out VALUES ('5=5.0', ':r');
\set r 12 & 10
INSERT INTO out VALUES ('12&10', ':r');
\set r 12 | 10
INSERT INTO out VALUES ('12|10', ':r');
\set r 12 # 10
INSERT INTO out VALUES ('12#10', ':r');
\set r ~ 12
INSERT INTO out VALUES ('~12', ':r');
\set r 1 << 62
INSERT INTO out VALUES ('1<<62', ':r');
\set r 1 << 63
INSERT INTO out VALUES ('1<<63', ':r');
\set n64 64
\set r 1 << :n64
INSERT INTO out VALUES ('1<<64', ':r');
\set n65 65
\set r 3 << :n65
INSERT INTO out VALUES ('3<<65', ':r');
\set r -16 >> 2
INSERT INTO out VALUES ('-16>>2', ':r');
\set r 2.6 & 7
INSERT INTO out VALUES ('2.6&7', ':r');
\set r true AND false
INSERT INTO out VALUES ('t and f', ':r');
\set r true OR false
INSERT INTO out VALUES ('t or f', ':r');
\set r NOT true
INSERT INTO out VALUES ('not t', ':r');
\set r NULL AND false
INSERT INTO out VALUES ('null and f', ':r');
\set r NULL OR true
INSERT INTO out VALUES ('null or t', ':r');
\set r false AND NULL
INSERT INTO out VALUES ('f and null', ':r');
\set r true AND NULL
INSERT INTO out VALUES ('t and null', ':r');
\set r true OR NULL
INSERT INTO out VALUES ('t or null', ':r');
\set r NOT NULL
INSERT INTO out VALUES ('not null', ':r');
\set r NULL
INSERT INTO out VALUES ('null', ':r');
\set r 1 + NULL
INSERT INTO out VALUES ('1+null', ':r');
\set r NULL IS NULL
INSERT INTO out VALUES ('null is null', ':r');
\set r 1 IS NULL
INSERT INTO out VALUES ('1 is null', ':r');
\set r 1 IS NOT NULL
INSERT INTO out VALUES ('1 is not null', ':r');
\set r 1 ISNULL
INSERT INTO out VALUES ('1 isnull', ':r');
\set r NULL NOTNULL
INSERT INTO out VALUES ('null notnull', ':r');
\set r true IS TRUE
INSERT INTO out VALUES ('t is true', ':r');
\set r false IS TRUE
INSERT INTO out VALUES ('f is true', ':r');
\set r 1 IS TRUE
INSERT INTO out VALUES ('1 is true', ':r');
\set r NULL IS NOT FALSE
INSERT INTO out VALUES ('null is not false', ':r');
\set r false IS FALSE
INSERT INTO out VALUES ('f is false', ':r');
\set r 1 = 1 IS TRUE
INSERT INTO out VALUES ('1=1 is true', ':r');
\set r NOT 1 = 2
INSERT INTO out VALUES ('not 1=2', ':r');
\set r 1 IS NULL IS NULL
INSERT INTO out VALUES ('1 is null is null', ':r');
\set r CASE WHEN 1 = 2 THEN 10 WHEN 2 = 2 THEN 20 ELSE 30 END
INSERT INTO out VALUES ('case1', ':r');
\set r CASE WHEN false THEN 1 END
INSERT INTO out VALUES ('case2', ':r');
\set r CASE WHEN 0 THEN 1 WHEN 0.5 THEN 2 END
INSERT INTO out VALUES ('case3', ':r');
\set r case when NULL then 1 else 2 end
INSERT INTO out VALUES ('case4', ':r');
\set r 2 + 3 * 4 - 10 / 3 % 2
INSERT INTO out VALUES ('prec1', ':r');
\set r 1 + 2 << 3
INSERT INTO out VALUES ('prec2', ':r');
\set r 1 | 2 = 3
INSERT INTO out VALUES ('prec3', ':r');
\set r ~ 1 + 2
INSERT INTO out VALUES ('prec4', ':r');
\set r - 2 * 3
INSERT INTO out VALUES ('prec5', ':r');
\set r NOT true OR true
INSERT INTO out VALUES ('prec6', ':r');
\set r true OR true AND false
INSERT INTO out VALUES ('prec7', ':r');
\set r 1 = 1 AND 2 < 3
INSERT INTO out VALUES ('prec8', ':r');
\set r -9223372036854775808
INSERT INTO out VALUES ('int64min', ':r');
\set r 9223372036854775807
INSERT INTO out VALUES ('int64max', ':r');
\set r abs(-5)
INSERT INTO out VALUES ('abs(-5)', ':r');
\set r abs(-5.5)
INSERT INTO out VALUES ('abs(-5.5)', ':r');
\set r abs(-9223372036854775808)
INSERT INTO out VALUES ('abs(int64min)', ':r');
\set r debug(3) + 1
INSERT INTO out VALUES ('debug', ':r');
\set r pi()
INSERT INTO out VALUES ('pi', ':r');
\set r sqrt(2)
INSERT INTO out VALUES ('sqrt(2)', ':r');
\set r sqrt(16)
INSERT INTO out VALUES ('sqrt(16)', ':r');
\set r ln(10)
INSERT INTO out VALUES ('ln(10)', ':r');
\set r exp(1)
INSERT INTO out VALUES ('exp(1)', ':r');
\set r exp(-2.5)
INSERT INTO out VALUES ('exp(-2.5)', ':r');
\set r pow(2, 10)
INSERT INTO out VALUES ('pow(2,10)', ':r');
\set r power(2, 0.5)
INSERT INTO out VALUES ('power(2,0.5)', ':r');
\set r pow(10, -3)
INSERT INTO out VALUES ('pow(10,-3)', ':r');
\set r int(5.5)
INSERT INTO out VALUES ('int(5.5)', ':r');
\set r int(4.5)
INSERT INTO out VALUES ('int(4.5)', ':r');
\set r int(-4.5)
INSERT INTO out VALUES ('int(-4.5)', ':r');
\set r int(-2.7)
INSERT INTO out VALUES ('int(-2.7)', ':r');
\set r double(3)
INSERT INTO out VALUES ('double(3)', ':r');
\set r double(3) / 2
INSERT INTO out VALUES ('double(3)/2', ':r');
\set r least(5, 3, 9)
INSERT INTO out VALUES ('least', ':r');
\set r greatest(5, 3, 9)
INSERT INTO out VALUES ('greatest', ':r');
\set r least(5, 3.5, 9)
INSERT INTO out VALUES ('least dbl', ':r');
\set r greatest(5, 3, 9.0)
INSERT INTO out VALUES ('greatest dbl', ':r');
\set r least(4, NULL)
INSERT INTO out VALUES ('least null', ':r');
\set r mod(17, 5)
INSERT INTO out VALUES ('mod(17,5)', ':r');
\set r hash(0, 0)
INSERT INTO out VALUES ('hash(0,0)', ':r');
\set r hash(42, 5432)
INSERT INTO out VALUES ('hash(42,5432)', ':r');
\set r hash_murmur2(-1, 123456789)
INSERT INTO out VALUES ('murmur2(-1,123456789)', ':r');
\set r hash_murmur2(9223372036854775807, -1)
INSERT INTO out VALUES ('murmur2(max,-1)', ':r');
\set r hash_fnv1a(0, 0)
INSERT INTO out VALUES ('fnv1a(0,0)', ':r');
\set r hash_fnv1a(42, 5432)
INSERT INTO out VALUES ('fnv1a(42,5432)', ':r');
\set r hash_fnv1a(-9223372036854775808, 77)
INSERT INTO out VALUES ('fnv1a(min,77)', ':r');
\set r hash_fnv1a(2.6, 1)
INSERT INTO out VALUES ('fnv1a(2.6,1)', ':r');
\set r permute(0, 10, 5432)
INSERT INTO out VALUES ('permute(0,10,5432)', ':r');
\set r permute(1, 10, 5432)
INSERT INTO out VALUES ('permute(1,10,5432)', ':r');
\set r permute(9, 10, 5432)
INSERT INTO out VALUES ('permute(9,10,5432)', ':r');
\set r permute(12345, 1000000, 1)
INSERT INTO out VALUES ('permute(12345,1e6,1)', ':r');
\set r permute(-5, 3, 0)
INSERT INTO out VALUES ('permute(-5,3,0)', ':r');
\set r permute(7, 1, 99)
INSERT INTO out VALUES ('permute(7,1,99)', ':r');
\set r permute(123456789, 9223372036854775807, -4)
INSERT INTO out VALUES ('permute(big)', ':r');
\set r permute(3, 2, 8)
INSERT INTO out VALUES ('permute(3,2,8)', ':r');
\set r permute(5, 7, 123)
INSERT INTO out VALUES ('permute(5,7,123)', ':r');
\set r :sy AND true
INSERT INTO out VALUES ('yes', ':r');
\set r :sof OR false
INSERT INTO out VALUES ('of', ':r');
\set r :st AND true
INSERT INTO out VALUES ('t', ':r');
\set r :sn OR false
INSERT INTO out VALUES ('n', ':r');
\set r :snull IS NULL
INSERT INTO out VALUES ('NuLl', ':r');
\set r :sd + 1
INSERT INTO out VALUES ('1e3+1', ':r');
\set r :si + 1
INSERT INTO out VALUES ('" 12"+1', ':r');
\set r :sp + 1
INSERT INTO out VALUES ('+5+1', ':r');
\set r :sneg * 2
INSERT INTO out VALUES ('-7*2', ':r');
\set r :sdd * 2
INSERT INTO out VALUES ('2.50*2', ':r');
\set r :son AND true
INSERT INTO out VALUES ('ON', ':r');
INSERT INTO out VALUES ('raw sdd', ':sdd'), ('raw si', ':si');
\set r 1.5e300 * 1e10
INSERT INTO out VALUES ('1.5e310', ':r');
\set r 9007199254740993 + 0.0
INSERT INTO out VALUES ('2^53+1 dbl', ':r');
\set r 2.2250738585072014e-308 * 0.5
INSERT INTO out VALUES ('denorm', ':r');
