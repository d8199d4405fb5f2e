/* encbench_key_management: a key management plugin for MariaDB whose keys have versions, so
   that encbench can measure key rotation (innodb_encryption_rotate_key_age) on a server
   that ships only file_key_management, whose keys have one version each.

   Written for encbench from MariaDB's documented encryption plugin API
   (include/mysql/plugin_encryption.h: struct st_mariadb_encryption).

   encbench_key_management_filename (read-only): a file of lines `key_id;version;hex-key`,
     read once at start-up; 16-, 24- or 32-byte AES keys in hex; `#` starts a comment.
   encbench_key_management_version (dynamic): the latest version handed out, 1 at start;
     SET GLOBAL moves it up to the highest version in the file and refuses anything else
     (versions only go up, as a key server's do).
   encbench_key_management_encryption_algorithm (read-only): AES_CBC or AES_CTR, as
     file_key_management's option of that name.

   Keys are never written to the error log.  Built by encbench at run time
   (encbench/servers/mariadb/keyplugin/__init__.py) against the server's own headers. */

#include <my_config.h>
#include <mysql/plugin_encryption.h>
#include <mysql/service_my_crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Debian's libmariadbd-dev has no libmysqlservices.a, which would define this pointer: the
   plugin defines the one service it uses itself.  At load the server reads the version stored
   here (my_crypt's is 0x0100 from MariaDB 10.1 on) and replaces it with its own table. */
#define MY_CRYPT_SERVICE_VERSION 0x0100
struct my_crypt_service_st *my_crypt_service =
  (struct my_crypt_service_st *) MY_CRYPT_SERVICE_VERSION;

#define MAX_KEYS 4096
#define PREFIX "encbench_key_management: "

struct versioned_key {
  unsigned int id;
  unsigned int version;
  unsigned int length;
  unsigned char bytes[MY_AES_MAX_KEY_LENGTH];
};

static struct versioned_key *keys;
static unsigned int key_count;
static unsigned int highest_version;

static char *key_filename;
static unsigned int current_version;
static unsigned long algorithm;

static const char *algorithm_names[] = {"AES_CBC", "AES_CTR", NULL};
static TYPELIB algorithm_typelib = {2, "encbench_key_management_encryption_algorithm",
                                    algorithm_names, NULL};

static enum my_aes_mode mode(void)
{
  return algorithm == 1 ? MY_AES_CTR : MY_AES_CBC;
}

/* The version InnoDB sees as the latest: read by the encryption threads while a SET GLOBAL
   may write it, hence atomic. */
static unsigned int latest(void)
{
  return __atomic_load_n(&current_version, __ATOMIC_ACQUIRE);
}

static int version_check(MYSQL_THD thd, struct st_mysql_sys_var *var, void *save,
                         struct st_mysql_value *value)
{
  long long wanted;
  (void) thd; (void) var;
  if (value->val_int(value, &wanted))
    return 1;
  /* Only up, and only to a version the key file holds: a version without a key would
     leave InnoDB unable to write a page. */
  if (wanted < (long long) latest() || wanted > (long long) highest_version)
    return 1;
  *(unsigned int *) save = (unsigned int) wanted;
  return 0;
}

static void version_update(MYSQL_THD thd, struct st_mysql_sys_var *var, void *var_ptr,
                           const void *save)
{
  (void) thd; (void) var;
  __atomic_store_n((unsigned int *) var_ptr, *(const unsigned int *) save, __ATOMIC_RELEASE);
}

static MYSQL_SYSVAR_STR(filename, key_filename, PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_READONLY,
                        "The key file: lines key_id;version;hex-key", NULL, NULL, "");
static MYSQL_SYSVAR_UINT(version, current_version, PLUGIN_VAR_RQCMDARG,
                         "The latest key version handed out (only up, at most the highest "
                         "version in the key file)",
                         version_check, version_update, 1, 1, 1000000, 0);
static MYSQL_SYSVAR_ENUM(encryption_algorithm, algorithm,
                         PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_READONLY,
                         "AES_CBC or AES_CTR", NULL, NULL, 0, &algorithm_typelib);

static struct st_mysql_sys_var *system_variables[] = {
  MYSQL_SYSVAR(filename), MYSQL_SYSVAR(version), MYSQL_SYSVAR(encryption_algorithm), NULL
};

static int hex_value(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One line `id;version;hex` into *key; 0 when it is one, 1 when it is blank or a comment,
   -1 when it is malformed. */
static int parse_line(const char *line, struct versioned_key *key)
{
  unsigned long id, version;
  char *end;
  size_t digits = 0;
  while (*line == ' ' || *line == '\t') line++;
  if (*line == '#' || *line == '\n' || *line == '\r' || *line == '\0')
    return 1;
  id = strtoul(line, &end, 10);
  if (end == line || *end != ';' || id == 0 || id > 0xffffffffUL) return -1;
  line = end + 1;
  version = strtoul(line, &end, 10);
  if (end == line || *end != ';' || version == 0 || version > 1000000) return -1;
  line = end + 1;
  while (hex_value(line[digits]) >= 0) digits++;
  if (digits != 32 && digits != 48 && digits != 64) return -1;
  for (size_t i = 0; i < digits / 2; i++)
    key->bytes[i] = (unsigned char) (hex_value(line[2 * i]) * 16 + hex_value(line[2 * i + 1]));
  line += digits;
  while (*line == ' ' || *line == '\t' || *line == '\r' || *line == '\n') line++;
  if (*line != '\0') return -1;
  key->id = (unsigned int) id;
  key->version = (unsigned int) version;
  key->length = (unsigned int) (digits / 2);
  return 0;
}

static struct versioned_key *find(unsigned int id, unsigned int version)
{
  for (unsigned int i = 0; i < key_count; i++)
    if (keys[i].id == id && keys[i].version == version)
      return &keys[i];
  return NULL;
}

static int read_keys(const char *path)
{
  char line[512];
  unsigned int number = 0;
  FILE *file = fopen(path, "r");
  if (file == NULL) {
    fprintf(stderr, PREFIX "cannot open the key file %s\n", path);
    return 1;
  }
  while (fgets(line, sizeof line, file) != NULL) {
    struct versioned_key key;
    int parsed;
    number++;
    parsed = parse_line(line, &key);
    if (parsed == 1)
      continue;
    /* The line's content is a key: its number is named, never its text. */
    if (parsed < 0 || key_count == MAX_KEYS || find(key.id, key.version) != NULL) {
      fprintf(stderr, PREFIX "%s line %u is not a new `key_id;version;hex-key` "
              "(or more than %d keys)\n", path, number, MAX_KEYS);
      memset(&key, 0, sizeof key);
      fclose(file);
      return 1;
    }
    keys[key_count++] = key;
    if (key.version > highest_version)
      highest_version = key.version;
    memset(&key, 0, sizeof key);
  }
  memset(line, 0, sizeof line);
  fclose(file);
  if (key_count == 0) {
    fprintf(stderr, PREFIX "the key file %s holds no key\n", path);
    return 1;
  }
  return 0;
}

static int plugin_init(void *p)
{
  (void) p;
  if (key_filename == NULL || key_filename[0] == '\0') {
    fprintf(stderr, PREFIX "encbench_key_management_filename is not set\n");
    return 1;
  }
  keys = calloc(MAX_KEYS, sizeof *keys);
  if (keys == NULL)
    return 1;
  if (read_keys(key_filename) != 0 || current_version > highest_version) {
    if (current_version > highest_version && key_count > 0)
      fprintf(stderr, PREFIX "version %u is beyond the key file's highest, %u\n",
              current_version, highest_version);
    memset(keys, 0, MAX_KEYS * sizeof *keys);
    free(keys);
    keys = NULL;
    key_count = 0;
    return 1;
  }
  return 0;
}

static int plugin_deinit(void *p)
{
  (void) p;
  if (keys != NULL) {
    memset(keys, 0, MAX_KEYS * sizeof *keys);
    free(keys);
    keys = NULL;
  }
  key_count = 0;
  return 0;
}

static unsigned int get_latest_key_version(unsigned int key_id)
{
  /* The newest version of this key at or below the version handed out. */
  for (unsigned int version = latest(); version > 0; version--)
    if (find(key_id, version) != NULL)
      return version;
  return ENCRYPTION_KEY_VERSION_INVALID;
}

static unsigned int get_key(unsigned int key_id, unsigned int version, unsigned char *dst,
                            unsigned int *length)
{
  const struct versioned_key *key = find(key_id, version);
  if (key == NULL)
    return ENCRYPTION_KEY_VERSION_INVALID;
  if (dst == NULL || *length < key->length) {
    *length = key->length;
    return dst == NULL ? 0 : ENCRYPTION_KEY_BUFFER_TOO_SMALL;
  }
  *length = key->length;
  memcpy(dst, key->bytes, key->length);
  return 0;
}

static unsigned int ctx_size(unsigned int key_id, unsigned int version)
{
  (void) key_id; (void) version;
  return my_aes_ctx_size(mode());
}

static int ctx_init(void *ctx, const unsigned char *key, unsigned int klen,
                    const unsigned char *iv, unsigned int ivlen, int flags,
                    unsigned int key_id, unsigned int version)
{
  (void) key_id; (void) version;
  return my_aes_crypt_init(ctx, mode(), flags, key, klen, iv, ivlen);
}

static int ctx_update(void *ctx, const unsigned char *src, unsigned int slen,
                      unsigned char *dst, unsigned int *dlen)
{
  return my_aes_crypt_update(ctx, src, slen, dst, dlen);
}

static int ctx_finish(void *ctx, unsigned char *dst, unsigned int *dlen)
{
  return my_aes_crypt_finish(ctx, dst, dlen);
}

static unsigned int encrypted_length(unsigned int slen, unsigned int key_id,
                                     unsigned int version)
{
  (void) key_id; (void) version;
  return my_aes_get_size(mode(), slen);
}

static struct st_mariadb_encryption descriptor = {
  MariaDB_ENCRYPTION_INTERFACE_VERSION,
  get_latest_key_version,
  get_key,
  ctx_size,
  ctx_init,
  ctx_update,
  ctx_finish,
  encrypted_length
};

maria_declare_plugin(encbench_key_management)
{
  MariaDB_ENCRYPTION_PLUGIN,
  &descriptor,
  "encbench_key_management",
  "encbench",
  "Versioned keys from a file, for measuring key rotation",
  PLUGIN_LICENSE_GPL,
  plugin_init,
  plugin_deinit,
  0x0100,
  NULL,
  system_variables,
  "1.0",
  MariaDB_PLUGIN_MATURITY_EXPERIMENTAL
}
maria_declare_plugin_end;
