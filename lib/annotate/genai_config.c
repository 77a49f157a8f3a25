/* annotate/genai_config.c: reading ONNX Runtime GenAI's genai_config.json.
 *
 * Owns oac_genai_config_load / _free / _find and the "%d" templates
 * (annotate/genai_config.h).  Contract: section 7 steps 1 and 2 (which names pair,
 * when GenAI shares a pair), section 3 (config-invalid, added with
 * annotate).
 *
 * What is read, as GenAI's own config.cpp reads it:
 *   model.decoder.inputs   every key ending in "_names" that contains
 *                          "past" (past_key_names, past_value_names,
 *                          past_names, past_conv_names, ...), paired
 *                          with the key of model.decoder.outputs that
 *                          has "present" for its first "past"; a key
 *                          without such an output is not a pair.
 *                          write_indices, nonpad_kv_seqlen: graph input
 *                          names; every other string (input_ids,
 *                          attention_mask, ...: run's decoder inputs).
 *   search.num_beams       integer >= 1, default 1
 *   search.past_present_share_buffer   boolean, default false
 *   search.max_length, model.context_length   integers >= 1 (the capacity a
 *                          deployment asks for), 0 when absent
 * Everything else is ignored.  The file is a hostile input: opened
 * without blocking (a FIFO is refused, not waited on), at most
 * OAC_GENAI_MAX_BYTES, duplicate keys refused, and every key read is
 * type-checked.
 *
 * Invariants:
 *  1. A failure leaves one config-invalid diagnostic (naming the file and
 *     the key) and nothing allocated.
 *  2. The JSON tree is jansson's and freed before returning; the result
 *     is copied into allocations of the context (oac_alloc).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate/genai_config.h"

/* GenAI's configs are a few kilobytes. */
#define OAC_GENAI_MAX_BYTES ((size_t)16 << 20)

static int invalid(oac_ctx *ctx, oac_diags *diags, const char *path,
                   const char *fmt, ...) OAC_PRINTF(4, 5);
static int invalid(oac_ctx *ctx, oac_diags *diags, const char *path,
                   const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    oac_where w = { .location = NULL };
    if (diags && oac_diag_add(diags, OAC_CONFIG_INVALID, &w, "%s: %s", path, msg) != OAC_OK)
        return OAC_ENOMEM;
    return oac_err(ctx, OAC_EPARSE, "%s: %s", path, msg);
}

void oac_genai_config_free(oac_genai_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_names; i++) {
        oac_dealloc(c->ctx, c->names[i].key);
        oac_dealloc(c->ctx, c->names[i].past);
        oac_dealloc(c->ctx, c->names[i].present);
    }
    oac_dealloc(c->ctx, c->names);
    for (size_t i = 0; i < c->n_inputs; i++) {
        oac_dealloc(c->ctx, c->inputs[i].key);
        oac_dealloc(c->ctx, c->inputs[i].name);
    }
    oac_dealloc(c->ctx, c->inputs);
    oac_dealloc(c->ctx, c->path);
    oac_dealloc(c->ctx, c->write_indices);
    oac_dealloc(c->ctx, c->nonpad_kv_seqlen);
    oac_dealloc(c->ctx, c);
}

/* The whole file in a new buffer (*len bytes, NUL-terminated). */
static int read_file(oac_ctx *ctx, oac_diags *diags, const char *path,
                     char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return invalid(ctx, diags, path, "cannot open: %s", strerror(errno));
    int rc = OAC_OK;
    char *buf = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = invalid(ctx, diags, path, "cannot stat: %s", strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = invalid(ctx, diags, path, "not a regular file");
        goto done;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > OAC_GENAI_MAX_BYTES) {
        rc = invalid(ctx, diags, path, "larger than %zu bytes", OAC_GENAI_MAX_BYTES);
        goto done;
    }
    size_t n = (size_t)st.st_size, got = 0;
    if (!(buf = oac_alloc(ctx, n + 1))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = invalid(ctx, diags, path, "cannot read: %s", strerror(errno));
            goto done;
        }
        if (r == 0)
            break;              /* shrank while read: parse what is there */
        got += (size_t)r;
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    buf = NULL;
done:
    oac_dealloc(ctx, buf);
    close(fd);
    return rc;
}

/* Is t a valid template: at most one "%d" and no other '%'? */
static bool template_ok(const char *t)
{
    const char *p = strchr(t, '%');
    if (!p)
        return true;
    return p[1] == 'd' && !strchr(p + 2, '%');
}

/* A copy of "past"-key k with its first "past" made "present". */
static char *present_key(oac_ctx *ctx, const char *k)
{
    const char *p = strstr(k, "past");
    size_t pre = (size_t)(p - k);
    return oac_asprintf(ctx, "%.*spresent%s", (int)pre, k, p + 4);
}

/* obj[key] when it is an object (or absent: NULL); a wrong type is an
 * error (*bad set). */
static json_t *sub_object(json_t *obj, const char *key, bool *bad)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (v && !json_is_object(v)) {
        *bad = true;
        return NULL;
    }
    return v;
}

static int copy_str(oac_ctx *ctx, char **dst, const char *s)
{
    return (*dst = oac_strdup(ctx, s)) ? OAC_OK : OAC_ENOMEM;
}

/* decoder.inputs[key] as a graph input name: a string, else `key`. */
static int input_name(oac_ctx *ctx, oac_diags *diags, const char *path,
                      json_t *inputs, const char *key, char **dst)
{
    json_t *v = inputs ? json_object_get(inputs, key) : NULL;
    if (v && !json_is_string(v))
        return invalid(ctx, diags, path, "model.decoder.inputs.%s is not a string", key);
    return copy_str(ctx, dst, v ? json_string_value(v) : key);
}

static int read_names(oac_genai_config *c, oac_diags *diags, json_t *inputs,
                      json_t *outputs)
{
    oac_ctx *ctx = c->ctx;
    const char *key;
    json_t *v;
    size_t cap = 0;
    json_object_foreach(inputs, key, v) {
        size_t kl = strlen(key);
        if (kl < 6 || strcmp(key + kl - 6, "_names") != 0 || !strstr(key, "past"))
            continue;
        if (!json_is_string(v))
            return invalid(ctx, diags, c->path, "model.decoder.inputs.%s is not a string", key);
        char *ok = present_key(ctx, key);
        if (!ok)
            return OAC_ENOMEM;
        json_t *o = outputs ? json_object_get(outputs, ok) : NULL;
        int rc = OAC_OK;
        if (o && !json_is_string(o))
            rc = invalid(ctx, diags, c->path, "model.decoder.outputs.%s is not a string", ok);
        else if (o && (!template_ok(json_string_value(v)) ||
                       !template_ok(json_string_value(o))))
            rc = invalid(ctx, diags, c->path,
                         "model.decoder.inputs.%s / outputs.%s: a name holds at most one "
                         "%%d (the layer) and no other '%%'", key, ok);
        else if (o && !strstr(json_string_value(v), "%d") != !strstr(json_string_value(o), "%d"))
            /* One name without the layer would pair every layer's past
             * with one present, or one past with layer 0's present. */
            rc = invalid(ctx, diags, c->path,
                         "model.decoder.inputs.%s / outputs.%s: the layer (%%d) is in one "
                         "name and not the other; write it in both, or in neither for "
                         "a single cache", key, ok);
        else if (o && oac_grow(ctx, (void **)&c->names, &cap, c->n_names + 1,
                               sizeof *c->names) != OAC_OK)
            rc = OAC_ENOMEM;
        if (rc == OAC_OK && o) {
            oac_genai_names *n = &c->names[c->n_names];
            memset(n, 0, sizeof *n);
            c->n_names++;
            n->key = oac_strdup(ctx, key);
            n->past = oac_strdup(ctx, json_string_value(v));
            n->present = oac_strdup(ctx, json_string_value(o));
            if (!n->key || !n->past || !n->present)
                rc = OAC_ENOMEM;
        }
        oac_dealloc(ctx, ok);
        if (rc != OAC_OK)
            return rc;
    }
    return OAC_OK;
}

/* The strings of decoder.inputs that are no past/present template
 * (those hold "%d" or end in "_names"). */
static int read_inputs(oac_genai_config *c, json_t *inputs)
{
    const char *key;
    json_t *v;
    size_t cap = 0;
    json_object_foreach(inputs, key, v) {
        size_t kl = strlen(key);
        if (!json_is_string(v) || (kl >= 6 && !strcmp(key + kl - 6, "_names")))
            continue;
        if (oac_grow(c->ctx, (void **)&c->inputs, &cap, c->n_inputs + 1,
                     sizeof *c->inputs) != OAC_OK)
            return OAC_ENOMEM;
        struct oac_genai_input *n = &c->inputs[c->n_inputs++];
        n->key = oac_strdup(c->ctx, key);
        n->name = oac_strdup(c->ctx, json_string_value(v));
        if (!n->key || !n->name)
            return OAC_ENOMEM;
    }
    return OAC_OK;
}

const char *oac_genai_input(const oac_genai_config *c, const char *key)
{
    for (size_t i = 0; c && i < c->n_inputs; i++)
        if (!strcmp(c->inputs[i].key, key))
            return c->inputs[i].name;
    return NULL;
}

static int read_search(oac_genai_config *c, oac_diags *diags, json_t *search)
{
    json_t *v = search ? json_object_get(search, "num_beams") : NULL;
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return invalid(c->ctx, diags, c->path,
                           "search.num_beams is not an integer of at least 1");
        c->num_beams = json_integer_value(v);
    }
    v = search ? json_object_get(search, "past_present_share_buffer") : NULL;
    if (v) {
        if (!json_is_boolean(v))
            return invalid(c->ctx, diags, c->path,
                           "search.past_present_share_buffer is not true or false");
        c->share_buffer = json_is_true(v);
    }
    v = search ? json_object_get(search, "max_length") : NULL;
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return invalid(c->ctx, diags, c->path,
                           "search.max_length is not an integer of at least 1");
        c->max_length = json_integer_value(v);
    }
    return OAC_OK;
}

static int read_context(oac_genai_config *c, oac_diags *diags, json_t *model)
{
    json_t *v = json_object_get(model, "context_length");
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return invalid(c->ctx, diags, c->path,
                           "model.context_length is not an integer of at least 1");
        c->context_length = json_integer_value(v);
    }
    return OAC_OK;
}

int oac_genai_config_load(oac_ctx *ctx, oac_genai_config **out,
                          const char *path, oac_diags *diags)
{
    *out = NULL;
    if (!path)
        return oac_err(ctx, OAC_EINVAL, "genai config: no path");
    char *text = NULL;
    size_t len = 0;
    json_t *root = NULL;
    oac_genai_config *c = NULL;
    /* An input of the call, readable or not (guard.c). */
    int rc = oac_guard_add(ctx, path, "the configuration");
    if (rc == OAC_OK)
        rc = read_file(ctx, diags, path, &text, &len);
    if (rc != OAC_OK)
        goto done;
    json_error_t jerr;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = invalid(ctx, diags, path, "not JSON: %s at line %d, column %d",
                     jerr.text, jerr.line, jerr.column);
        goto done;
    }
    if (!(c = oac_calloc(ctx, 1, sizeof *c))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    c->ctx = ctx;
    c->num_beams = 1;
    if (!(c->path = oac_strdup(ctx, path))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    bool bad = false;
    json_t *model = json_is_object(root) ? sub_object(root, "model", &bad) : NULL;
    if (!json_is_object(root) || bad || !model) {
        rc = invalid(ctx, diags, path, "%s", !json_is_object(root)
                     ? "not a JSON object" : "has no \"model\" object");
        goto done;
    }
    json_t *dec = sub_object(model, "decoder", &bad);
    if (bad || !dec) {
        rc = invalid(ctx, diags, path, "has no \"model.decoder\" object");
        goto done;
    }
    json_t *inputs = sub_object(dec, "inputs", &bad);
    json_t *outputs = bad ? NULL : sub_object(dec, "outputs", &bad);
    json_t *search = bad ? NULL : sub_object(root, "search", &bad);
    if (bad) {
        rc = invalid(ctx, diags, path, "model.decoder.inputs, model.decoder.outputs "
                     "and search must be objects");
        goto done;
    }
    if ((rc = read_names(c, diags, inputs, outputs)) != OAC_OK ||
        (rc = read_inputs(c, inputs)) != OAC_OK ||
        (rc = read_search(c, diags, search)) != OAC_OK ||
        (rc = read_context(c, diags, model)) != OAC_OK ||
        (rc = input_name(ctx, diags, path, inputs, "write_indices",
                         &c->write_indices)) != OAC_OK ||
        (rc = input_name(ctx, diags, path, inputs, "nonpad_kv_seqlen",
                         &c->nonpad_kv_seqlen)) != OAC_OK)
        goto done;
    *out = c;
    c = NULL;
done:
    json_decref(root);
    oac_dealloc(ctx, text);
    oac_genai_config_free(c);
    return rc;
}

/* Is there a regular file at path? */
static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int oac_genai_config_find(oac_ctx *ctx, char **out, const char *model_path)
{
    *out = NULL;
    const char *slash = strrchr(model_path, '/');
    size_t dl = slash ? (size_t)(slash - model_path) + 1 : 0;
    const char *base = model_path + dl;
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".onnx") == 0)
        bl -= 5;
    char *p = oac_asprintf(ctx, "%.*s%.*s.genai_config.json", (int)dl, model_path,
                           (int)bl, base);
    if (!p)
        return OAC_ENOMEM;
    if (is_file(p)) {
        *out = p;
        return OAC_OK;
    }
    oac_dealloc(ctx, p);
    if (!(p = oac_asprintf(ctx, "%.*sgenai_config.json", (int)dl, model_path)))
        return OAC_ENOMEM;
    if (is_file(p)) {
        *out = p;
        return OAC_OK;
    }
    oac_dealloc(ctx, p);
    return OAC_OK;
}

bool oac_genai_match(const char *t, const char *name, long *layer)
{
    *layer = 0;
    const char *pct = strstr(t, "%d");
    if (!pct)
        return strcmp(t, name) == 0;
    size_t pre = (size_t)(pct - t), suf = strlen(pct + 2), n = strlen(name);
    if (n <= pre + suf || memcmp(name, t, pre) != 0 ||
        memcmp(name + n - suf, pct + 2, suf) != 0)
        return false;
    const char *d = name + pre, *end = name + n - suf;
    if (end - d > 9 || (*d == '0' && end - d > 1))
        return false;           /* a layer below 10^9, written as %d writes it */
    long v = 0;
    for (; d < end; d++) {
        if (*d < '0' || *d > '9')
            return false;
        v = v * 10 + (*d - '0');
    }
    *layer = v;
    return true;
}

char *oac_genai_expand(oac_ctx *ctx, const char *t, long layer)
{
    const char *pct = strstr(t, "%d");
    if (!pct)
        return oac_strdup(ctx, t);
    return oac_asprintf(ctx, "%.*s%ld%s", (int)(pct - t), t, layer, pct + 2);
}
