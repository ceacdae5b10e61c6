// Files the human attaches (a new task's, a reply's), read in the page and sent the way the REST API takes them:
// base64 inside the JSON body, each with an id of its own.

// The server's limits per request (docs/rest-api.md): checked here first, so a file too many is said at once.
export const MAX_FILES = 10;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The files chosen in a file input, as the API's attachments: [{id, filename, mimeType, data (base64)}], within
 * the API's bounds; a refusal names them `per` what the human is sending ("request", "task").
 */
export function readFiles(input, per = "request") {
  const files = Array.from(input.files || []);
  if (files.length > MAX_FILES) return Promise.reject(new Error(`at most ${MAX_FILES} files per ${per}`));
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (total > MAX_FILE_BYTES) return Promise.reject(new Error(`at most 4 MiB of files per ${per}`));
  // Ids must be unique within the task: a time stamp and a random tail keep two sends of "log.txt" apart.
  const stamp = Date.now().toString(36);
  return Promise.all(
    files.map(
      (file, index) =>
        new Promise((resolve, reject) => {
          const reader = new FileReader();
          reader.onload = () => {
            const url = String(reader.result);
            resolve({
              id: `${stamp}-${index}-${Math.random().toString(36).slice(2, 8)}`,
              filename: file.name,
              mimeType: file.type || "application/octet-stream",
              data: url.slice(url.indexOf(",") + 1),
            });
          };
          reader.onerror = () => reject(new Error(`could not read ${file.name}`));
          reader.readAsDataURL(file);
        }),
    ),
  );
}
