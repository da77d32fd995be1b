//! The input files the pages' commands read but do not create, written into each section's
//! directory before its blocks run. The outputs the pages show (counts, verdicts, offsets) are
//! of these inputs.

use std::io::Write;
use std::path::Path;

/// What a fixture file holds.
enum Content {
    /// This text.
    Text(&'static str),
    /// This text, gzip-compressed.
    Gzip(&'static str),
}

/// The files, by name. Each must be used by some page (the runner checks).
const FIXTURES: &[(&str, Content)] = &[
    // Near-duplicates: a known campaign (two messages), a copy of its bank
    // message sent to someone else with a dozen words changed, and an unrelated mail.
    (
        "campaign.mbox",
        Content::Text(
            r#"From desk@secure-bank.example Mon Nov 23 08:00:00 2026
Message-ID: <kit-bank-0412@secure-bank.example>
From: "Account Security" <desk@secure-bank.example>
To: alice@example.org
Subject: Action required: your online banking access is suspended

Dear Alice,

We have detected unusual sign-in activity on your online banking account from a device we do
not recognise. For your protection, access to online banking, card payments and transfers has
been temporarily suspended until you confirm your identity.

To restore full access, please verify your details within 24 hours using our secure
verification page. You will be asked to confirm your card number, expiry date and the
one-time code we send to your phone. If we do not hear from you within this time, your
account will be closed permanently and any pending payments will be returned to the sender.

Verify your account now: https://secure-bank.example/verify?ref=8f2c41d0

Please do not reply to this message; this mailbox is not monitored. If you have already
completed the verification, you can ignore this notice. Thank you for banking with us and for
helping us keep your money safe.

Kind regards,
Customer Protection Team
Security reference: 0412-7731-AB

From parcel@delivery-notice.example Mon Nov 23 09:00:00 2026
Message-ID: <kit-parcel-1187@delivery-notice.example>
From: "Parcel Service" <parcel@delivery-notice.example>
To: alice@example.org
Subject: Your parcel could not be delivered

Hello,

Our courier attempted to deliver your parcel today but nobody was available to sign for it.
The parcel is now held at our local depot. Because the sender did not pay the full customs
and handling charges, a small fee of 1.99 EUR is due before we can schedule a new delivery.

Please pay the outstanding fee and choose a new delivery date on our tracking page. Parcels
that are not claimed within five working days are returned to the sender and the fee can no
longer be refunded. You will need your tracking number and a valid payment card.

Track and reschedule: https://delivery-notice.example/track?id=DE44817

We apologise for the inconvenience and thank you for your understanding.

Delivery Support
"#,
        ),
    ),
    (
        "suspect.eml",
        Content::Text(
            r#"Message-ID: <x9-22817@mail-secure.example>
From: "Account Security" <alerts@mail-secure.example>
To: robert@example.net
Subject: Action required: your online banking access is suspended

Dear Robert,

We have detected unusual sign-in activity on your online banking account from a device we do
not recognise. For your safety, access to online banking, card payments and transfers has
been temporarily suspended until you confirm your identity.

To restore full access, please verify your details within 48 hours using our secure
verification page. You will be asked to confirm your card number, expiry date and the
one-time code we send to your mobile. If we do not hear from you within this time, your
account will be closed permanently and any pending payments will be returned to the sender.

Verify your account now: https://mail-secure.example/v?t=c77e019a

Please do not reply to this message; this mailbox is not monitored. If you have already
completed the verification, you can ignore this notice. Thank you for banking with us and for
helping us keep your money safe.

Kind regards,
Customer Protection Team
Security reference: 9035-1184-KD
"#,
        ),
    ),
    (
        "newsletter.eml",
        Content::Text(
            r#"Message-ID: <weekly-48@news.example>
From: "Garden Club" <news@news.example>
To: alice@example.org
Subject: This week in the garden club

Hello everyone,

The autumn planting day went well: thirty members came, and the new beds along the south wall
now hold tulips, crocuses and a row of young apple trees. Thanks to everyone who brought tools
and cake. Next Saturday we will prune the roses and clear the leaves from the pond; bring
gloves if you have them. The library has three new books on composting, and the seed swap
moves to the first Sunday of each month. Minutes of the last meeting are on the notice board.

See you in the garden,
Margaret
"#,
        ),
    ),
    // `check … --json > verdicts.jsonl`: any URLs will do (the output is not shown).
    (
        "urls.txt",
        Content::Text(
            "metamascks.com\nhttp://example.com/\nhttps://sig2fa.wixsite.com/sig2faverify\n",
        ),
    ),
    // The exceptions example: a hosting provider listed, one customer's site allowed.
    ("hosting.txt", Content::Text("evil-hosting.com\n")),
    ("customers.txt", Content::Text("docs.evil-hosting.com\n")),
    // A hosts file: 11 lines, 2 comments, 6 localhost lines, 4 names (two on one line).
    (
        "hosts.gz",
        Content::Gzip(
            "# Phishing hosts reported this week\n\
             # 0.0.0.0 blocks, 127.0.0.1 works too\n\
             127.0.0.1 localhost\n\
             127.0.0.1 localhost.localdomain\n\
             255.255.255.255 broadcasthost\n\
             ::1 localhost\n\
             ::1 ip6-localhost\n\
             fe80::1%lo0 localhost\n\
             0.0.0.0 metamask-restore.example\n\
             0.0.0.0 paypal-login-verify.example secure-appleid-check.example\n\
             127.0.0.1 wallet-connect-sync.example\n",
        ),
    ),
    // AdBlock rules: 8 lines, 2 domains blocked, 1 exception, 5 skipped.
    (
        "filters.txt",
        Content::Text(
            "[Adblock Plus 2.0]\n\
             ! Title: phishing filters\n\
             ||evil-hosting.example^\n\
             ||wallet-drainer.example^$third-party\n\
             @@||docs.evil-hosting.example^\n\
             example.com##.ad-banner\n\
             /banner[0-9]+\\.gif/\n\
             ||evil-cdn.example/payload/*.js\n",
        ),
    ),
    // The keyword list the keyword guide shows with `cat`.
    (
        "spam-keywords.txt",
        Content::Text("free money\nclaim your prize\n免费赚钱\nwire transfer now\nViagra\n"),
    ),
    // The e-mail the keyword guide shows with `cat`.
    (
        "offer.eml",
        Content::Text(
            "From: \"Prize Desk\" <desk@example.com>\n\
             To: you@example.org\n\
             Subject: =?UTF-8?B?546w5Zyo5YWN6LS56LWa6ZKx5ZWm?=\n\
             MIME-Version: 1.0\n\
             Content-Type: multipart/alternative; boundary=\"b\"\n\
             \n\
             --b\n\
             Content-Type: text/plain; charset=utf-8\n\
             Content-Transfer-Encoding: quoted-printable\n\
             \n\
             Dear friend, you won! Get FREE\n\
             money today: claim=20your prize before Friday.\n\
             --b\n\
             Content-Type: text/html; charset=utf-8\n\
             Content-Transfer-Encoding: base64\n\
             \n\
             PHA+UGxlYXNlIDxiPldJUkU8L2I+IHRyYW5zZmVyIG5vdy48L3A+\n\
             --b--\n",
        ),
    ),
    // NDJSON for `POST /v1/check`: a JSON string and a `{"url": …}` object.
    (
        "urls.ndjson.gz",
        Content::Gzip(
            "\"http://0001-5cf.pages.dev/awards\"\n{\"url\": \"https://example.org/\"}\n",
        ),
    ),
];

/// The fixtures' file names.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    FIXTURES.iter().map(|(name, _)| *name)
}

/// Writes every fixture into `dir`.
pub(super) fn write_fixtures(dir: &Path) {
    for (name, content) in FIXTURES {
        let bytes = match content {
            Content::Text(text) => text.as_bytes().to_vec(),
            Content::Gzip(text) => {
                let mut gz =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                gz.write_all(text.as_bytes()).expect("gzip into memory");
                gz.finish().expect("gzip into memory")
            }
        };
        std::fs::write(dir.join(name), bytes).expect("write a fixture");
    }
}
