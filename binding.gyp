{
  "targets": [
    {
      "target_name": "iprecord_mmap",
      "sources": ["native/mmap.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
