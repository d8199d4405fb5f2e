/* pagecrypt: CPU per 16 KiB page for two ways of calling OpenSSL's EVP cipher API.
 *
 *   per-page  MariaDB's pattern (mysys_ssl/my_crypt.cc, reached from fil_space_encrypt /
 *             fil_space_decrypt through encryption_crypt → my_aes_crypt): for every page a new
 *             EVP_CIPHER_CTX, EVP_CipherInit_ex with the legacy EVP_aes_256_*() cipher (which
 *             OpenSSL 3 fetches from the provider again on every init), the key and the page's
 *             IV, one update over the page body, final, free.
 *   reused    what `openssl speed -evp` measures: one context initialised once, then only
 *             updates, one per page.
 *
 * usage: pagecrypt ctr|cbc encrypt|decrypt SECONDS_PER_PATTERN
 * prints one line per pattern: pattern=per-page pages=N seconds=S us_per_page=U
 * The CPU time is the process's own (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)), so time other
 * processes take on a shared machine does not count.  AES-NI on or off is the caller's
 * OPENSSL_ia32cap, as for openssl speed.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE 16384
/* InnoDB leaves the page's first 38 bytes (FIL_PAGE_DATA) and its last 8 in the clear. */
#define BODY (PAGE - 38 - 8)

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static const EVP_CIPHER *cipher_of(const char *name) {
    if (strcmp(name, "ctr") == 0) return EVP_aes_256_ctr();
    if (strcmp(name, "cbc") == 0) return EVP_aes_256_cbc();
    return NULL;
}

static void fail(const char *what) {
    fprintf(stderr, "pagecrypt: %s failed\n", what);
    exit(1);
}

/* One page the way my_aes_crypt does it. */
static void per_page(const EVP_CIPHER *cipher, int enc, const unsigned char *key,
                     const unsigned char *iv, const unsigned char *in, unsigned char *out) {
    int n = 0, m = 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) fail("EVP_CIPHER_CTX_new");
    if (!EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, enc)) fail("EVP_CipherInit_ex");
    /* MariaDB's InnoDB pages are whole blocks: no padding (MyCTX_nopad). */
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    if (!EVP_CipherUpdate(ctx, out, &n, in, BODY - BODY % 16)) fail("EVP_CipherUpdate");
    if (!EVP_CipherFinal_ex(ctx, out + n, &m)) fail("EVP_CipherFinal_ex");
    EVP_CIPHER_CTX_free(ctx);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pagecrypt ctr|cbc encrypt|decrypt SECONDS\n");
        return 2;
    }
    const EVP_CIPHER *cipher = cipher_of(argv[1]);
    int enc = strcmp(argv[2], "encrypt") == 0;
    double seconds = atof(argv[3]);
    if (!cipher || (!enc && strcmp(argv[2], "decrypt") != 0) || seconds <= 0) {
        fprintf(stderr, "pagecrypt: bad arguments\n");
        return 2;
    }
    static unsigned char key[32], iv[16], in[PAGE], out[PAGE + 32];
    for (size_t i = 0; i < sizeof key; i++) key[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < sizeof in; i++) in[i] = (unsigned char)(i * 31);

    /* per-page: a fresh IV per page, as InnoDB derives one from the page number and LSN */
    long pages = 0;
    double start = cpu_s(), now = start;
    while (now - start < seconds) {
        for (int k = 0; k < 64; k++, pages++) {
            memcpy(iv, &pages, sizeof pages);
            per_page(cipher, enc, key, iv, in, out);
        }
        now = cpu_s();
    }
    printf("pattern=per-page pages=%ld seconds=%.6f us_per_page=%.4f\n", pages, now - start,
           (now - start) * 1e6 / pages);

    /* reused: one context, initialised once, as openssl speed */
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx || !EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, enc)) fail("EVP_CipherInit_ex");
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    pages = 0;
    start = now = cpu_s();
    while (now - start < seconds) {
        for (int k = 0; k < 64; k++, pages++) {
            int n = 0;
            if (!EVP_CipherUpdate(ctx, out, &n, in, BODY - BODY % 16)) fail("EVP_CipherUpdate");
        }
        now = cpu_s();
    }
    EVP_CIPHER_CTX_free(ctx);
    printf("pattern=reused pages=%ld seconds=%.6f us_per_page=%.4f\n", pages, now - start,
           (now - start) * 1e6 / pages);
    return 0;
}
